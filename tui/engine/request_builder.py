"""Messages + request settings -> the ChatRequest the client sends (trimmed or not, counted).

When trimming is off the request carries `trim=None` (the record then says `trim_enabled=False`)
and the messages are still counted, so the UI can show how far over budget they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui.engine.client import ChatRequest
from tui.engine.reasoning import without_reasoning
from tui.engine.trim import TrimPolicy, TrimResult, trim

if TYPE_CHECKING:
    from tui.engine.tokens import PromptCounter


@dataclass(frozen=True, slots=True)
class RequestSettings:
    """What every request of a session shares: the values the config resolved."""

    model: str
    temperature: float
    # Never more than the output reserve, so the budget plus the reply fit the context window.
    max_tokens: int
    token_budget: int
    trim_policy: TrimPolicy


def build_request(
    messages: Sequence[dict[str, Any]],
    settings: RequestSettings,
    counter: PromptCounter,
    *,
    trim_enabled: bool,
    stream: bool,
    model: str | None = None,
    budget: int | None = None,
) -> ChatRequest:
    """The request for `messages`; `budget` defaults to the settings' token budget. Stored
    reasoning is not sent back (reasoning.py)."""
    messages = without_reasoning(messages)
    result: TrimResult | None = None
    if trim_enabled:
        result = trim(
            messages,
            budget if budget is not None else settings.token_budget,
            settings.trim_policy,
            counter,
        )
        sent = result.messages
        counted = result.tokens_after
    else:
        sent = list(messages)
        counted = counter.count_messages(sent)
    return ChatRequest(
        messages=list(sent),
        model=model or settings.model,
        stream=stream,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        trim=result,
        prompt_tokens_estimated=counter.calibrated(counted),
        prompt_tokens_exact=counter.exact,
        prompt_tokens_counted=counted,
        prompt_tokens_source=counter.prompt_source(sent),
    )
