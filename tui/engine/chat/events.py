"""What the streaming client yields, in order, each stamped with `time.perf_counter()` seconds.

A request yields: RequestStarted (per attempt), maybe Retrying, FirstByte, FirstToken, Delta...
(UsageReported anywhere after FirstByte; PromptProgress before FirstToken, from a server
that reports its prefill; FirstAnswerToken just before the first content or
tool-call Delta, after any reasoning; Paused whenever no token came for chunk_timeout_ms, the
reply going on), and always exactly one Finished last, whose record carries the status (ok /
stalled / ended_early / cancelled / error) and every measured figure. Deltas carry the receipt
time so consumers (the app, `ask`) never time from render times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tui.engine.metrics.prefill import PrefillSample
from tui.engine.metrics.record import RequestRecord

DeltaKind = Literal["content", "reasoning", "tool_call"]


@dataclass(frozen=True, slots=True)
class RequestStarted:
    at: float
    attempt: int  # 0 for the first try, 1.. for retries


@dataclass(frozen=True, slots=True)
class Retrying:
    at: float
    attempt: int  # the attempt about to start
    delay_s: float
    reason: str  # one line, e.g. "HTTP 429 rate limited"


@dataclass(frozen=True, slots=True)
class FirstByte:
    at: float


@dataclass(frozen=True, slots=True)
class FirstToken:
    at: float


@dataclass(frozen=True, slots=True)
class FirstAnswerToken:
    """The first content or tool-call token (after the reasoning, when the model thinks first):
    the answer starts; a reasoning block can collapse."""

    at: float


@dataclass(frozen=True, slots=True)
class PromptProgress:
    """The server's progress through the prompt (llama.cpp's `prompt_progress`), before the
    first token; `rate`: prompt tokens computed a second so far (prefill.py), None unknown."""

    at: float
    sample: PrefillSample
    rate: float | None


@dataclass(frozen=True, slots=True)
class Paused:
    """No token since `since` for longer than chunk_timeout_ms (`at` is when that was seen). The
    reply goes on: a Delta ends the pause; only the stall limit (stall_timeout_ms) ends the
    stream. Show it live as "no token for {now - since:.1f} s…"."""

    at: float
    since: float  # the last token's receipt time


@dataclass(frozen=True, slots=True)
class Delta:
    text: str
    at: float
    kind: DeltaKind = "content"
    # The first Delta of its chunk: a chunk carrying thinking and content (or several tool
    # calls) gives one Delta each; a live token count counts chunks, as the record does.
    new_chunk: bool = True


@dataclass(frozen=True, slots=True)
class UsageReported:
    at: float
    prompt_tokens: int | None
    completion_tokens: int | None


@dataclass(frozen=True, slots=True)
class Finished:
    at: float
    record: RequestRecord
    text: str  # the whole reply received (partial when stalled, ended early or cancelled)
    reasoning: str = ""  # the model's reasoning text, when it sent any (never part of `text`)


ClientEvent = (
    RequestStarted
    | Retrying
    | FirstByte
    | FirstToken
    | FirstAnswerToken
    | Delta
    | Paused
    | PromptProgress
    | UsageReported
    | Finished
)
