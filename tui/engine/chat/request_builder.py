"""Messages + request settings -> the ChatRequest the client sends (trimmed or not, counted).

When trimming is off the request carries `trim=None` (the record then says `trim_enabled=False`)
and the messages are still counted, so the UI can show how far over budget they are.

`ask` sends without counting first when it can (`uncounted_request`): with trimming off, or a
conversation that fits the budget whatever the tokenizer (prompt_bound.py), nothing depends on
the count, which `fill_prompt_counts` then puts in the record after the reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui.engine.chat.reasoning import without_reasoning
from tui.engine.chat.request import ChatRequest

if TYPE_CHECKING:
    from tui.engine.metrics.record import RequestRecord
    from tui.engine.tokens.counter import PromptCounter, TokenCounter
    from tui.engine.tokens.trim import TrimPolicy, TrimResult


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
    from tui.engine.tokens.trim import trim  # its tokenizer is loaded here anyway

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


def uncounted_request(
    messages: Sequence[dict[str, Any]],
    *,
    model: str,
    temperature: float,
    max_tokens: int,
    stream: bool,
    trim_enabled: bool,
    budget: int | None = None,
) -> ChatRequest:
    """The request for a conversation sent whole without counting it first: trimming is off,
    or it fits `budget` whatever the tokenizer (`prompt_bound.fits_without_counting`)."""
    return ChatRequest(
        messages=without_reasoning(messages),
        model=model,
        stream=stream,
        temperature=temperature,
        max_tokens=max_tokens,
        trim_fits=trim_enabled,
        trim_budget=budget if trim_enabled else None,
    )


def fill_prompt_counts(
    record: RequestRecord, messages: Sequence[dict[str, Any]], counter: TokenCounter
) -> None:
    """The prompt's counts for the record of an `uncounted_request`, once the reply is in (the
    counter learns from the server's usage as after any reply)."""
    counted = counter.count_messages(messages)
    record.prompt_tokens_estimated = counter.calibrated(counted)
    record.prompt_tokens_exact = counter.exact
    record.tokens_before = record.tokens_after = counted
    if record.prompt_tokens_usage:
        counter.record_usage(counted, record.prompt_tokens_usage)
