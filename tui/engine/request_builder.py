"""Messages + config -> the ChatRequest the client sends (trimmed or not, counted either way).

When trimming is off the request carries `trim=None` (the record then says `trim_enabled=False`)
and the messages are still counted, so the UI can show how far over budget they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tui.engine.client import ChatRequest
from tui.engine.trim import TrimResult, trim

if TYPE_CHECKING:
    from tui.config import Config
    from tui.engine.tokens import TokenCounter


def build_request(
    messages: Sequence[dict[str, Any]],
    config: Config,
    counter: TokenCounter,
    *,
    trim_enabled: bool,
    stream: bool,
    model: str | None = None,
    budget: int | None = None,
) -> ChatRequest:
    """The request for `messages`; `budget` defaults to config.token_budget.

    max_tokens is config.output_limit: never more than reserve_for_output, so the budget plus the
    reply fit the context window the config was validated against.
    """
    result: TrimResult | None = None
    if trim_enabled:
        result = trim(
            messages,
            budget if budget is not None else config.token_budget,
            config.trim_policy(),
            counter,
        )
        sent = result.messages
        counted = result.tokens_after
    else:
        sent = list(messages)
        counted = counter.count_messages(sent)
    return ChatRequest(
        messages=list(sent),
        model=model or config.model,
        stream=stream,
        temperature=config.temperature,
        max_tokens=config.output_limit,
        trim=result,
        prompt_tokens_estimated=counter.calibrated(counted),
        prompt_tokens_exact=counter.exact,
        prompt_tokens_counted=counted,
    )
