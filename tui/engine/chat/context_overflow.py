"""What a context overflow's message may say about the prompt: only what is true of it.

"Even trimmed to 6,000 tokens" about a 9-token prompt is false (the budget is not what was
sent) and its fix, a lower budget, cannot help. So the message rests on what the client knows
of what it sent: whether trimming was on, what it dropped, what it left (counted, or within the
budget uncounted), whether anything could be dropped at all, the reply asked for, and the
window the server states in its answer, when it states one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.engine.chat.request import ChatRequest

# The window as servers state it: OpenAI and vLLM ("maximum context length is 4096 tokens"),
# llama.cpp's server ("n_ctx": 4096 in its error, or "context size (4096)").
_STATED_WINDOW = re.compile(
    r"maximum context length is (\d[\d,]*)|n_ctx\W{0,4}(\d+)|context size \D{0,4}(\d+)",
    re.IGNORECASE,
)
_KEPT_ROLES = ("system", "developer")  # trimming keeps these, and the latest user message
# The local count can be off the server's tokenizer by a third (cl100k against Gemma's): a
# prompt "fits" a stated window only with this much room to spare.
LOCAL_COUNT_MARGIN = 1.5


@dataclass(frozen=True, slots=True)
class PromptFit:
    """What was sent, as far as a context overflow's hint is concerned."""

    budget: int | None  # trimming's budget; None: trimming was off
    tokens: int | None  # the prompt sent, by the local count; None: not counted
    dropped: int  # messages trimming dropped
    droppable: bool  # holds messages trimming could drop (history, tool results)
    reply_tokens: int  # max_tokens asked


def _droppable(messages: list[dict[str, Any]]) -> bool:
    """Anything besides the system prompt and the latest message (what trimming keeps)."""
    return sum(1 for message in messages if message.get("role") not in _KEPT_ROLES) > 1


def prompt_fit(request: ChatRequest) -> PromptFit:
    trim = request.trim
    if trim is not None:
        return PromptFit(
            budget=trim.budget,
            tokens=trim.tokens_after,
            dropped=len(trim.dropped),
            droppable=_droppable(trim.messages),
            reply_tokens=request.max_tokens,
        )
    return PromptFit(
        budget=request.trim_budget,  # trimming on, the prompt within it uncounted; or off
        tokens=request.prompt_tokens_counted,
        dropped=0,
        droppable=_droppable(request.messages),
        reply_tokens=request.max_tokens,
    )


def stated_window(server_text: str) -> int | None:
    """The context window the server's answer names, if it names one."""
    match = _STATED_WINDOW.search(server_text)
    if match is None:
        return None
    digits = next(group for group in match.groups() if group)
    return int(digits.replace(",", ""))


def overflow_hint(fit: PromptFit | None, window: int | None = None) -> tuple[str, str]:
    """(what is true of the prompt, to follow "the prompt exceeds the model's context length";
    what to do about it)."""
    raise_window = "raise the server's context window"
    if fit is None:
        return "", f"shorten the conversation or {raise_window}"
    size = f"{fit.tokens:,} tokens" if fit.tokens is not None else ""
    below = f" below {window:,} (the server's window)" if window is not None else ""
    tokens = fit.tokens
    if (
        tokens is not None
        and window is not None
        and tokens * LOCAL_COUNT_MARGIN < window < tokens + fit.reply_tokens
    ):
        # The prompt fits by itself, whatever the server's tokenizer: the reply does not.
        return (
            f" with the reply: the prompt ({size}) fits the {window:,}-token window, the "
            f"{fit.reply_tokens:,}-token reply asked for does not",
            f"ask for a shorter reply (maxTokens) or {raise_window}",
        )
    if fit.budget is not None and fit.dropped:
        dropped = f"{fit.dropped} message{'s' if fit.dropped != 1 else ''} dropped"
        return (
            f" even trimmed to {size} (budget {fit.budget:,}, {dropped})",
            f"lower the budget{below} or {raise_window}",
        )
    counted = f"{size}: " if size else ""
    if not fit.droppable:
        return (
            f" ({counted}the latest message and any system prompt, nothing trimming could drop)",
            f"send a shorter prompt, ask for a shorter reply (maxTokens) or {raise_window}",
        )
    if fit.budget is None:
        return (
            f" ({counted}sent whole, trimming is off)",
            f"turn trimming on with a budget{below or ' within the server window'}, "
            f"or {raise_window}",
        )
    return (
        f" ({counted}within the {fit.budget:,}-token budget, so trimming dropped nothing)",
        f"lower the budget{below or ' to the server window'} (context_window says it), "
        f"or {raise_window}",
    )
