"""Latency records, TTFT levels, request classes and percentiles.

Definitions follow docs/metrics.md#definitions: TTFT counts only chunks that carry content,
reasoning or a tool-call delta; TPOT is (total - TTFT) / (output_tokens - 1), as vLLM and
OpenTelemetry define it. All durations here are milliseconds unless a name says otherwise.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from itertools import pairwise
from typing import Any


class TtftLevel(str, Enum):
    OK = "ok"
    WARN = "warn"
    ERROR = "error"


class RequestStatus(str, Enum):
    OK = "ok"
    STALLED = "stalled"  # a gap after the first chunk exceeded chunk_timeout_ms
    ENDED_EARLY = "ended_early"  # the stream closed without a finish reason or [DONE]
    CANCELLED = "cancelled"  # the user cancelled; the partial reply is kept
    ERROR = "error"  # the request failed; error_kind says how


@dataclass(frozen=True, slots=True)
class Thresholds:
    """TTFT colouring: below warn is ok, from warn is warn, from error is error.

    One verdict per request: a request's class target is its ok/warn boundary
    (`for_target`), so "met" is always shown ok and "missed" never is; `warn_ms` is the
    boundary only for a request no class covers, and `error_ms` stays the warn/error one
    (never below the target).
    """

    warn_ms: float = 1200.0
    error_ms: float = 2500.0

    def for_target(self, target_ms: float | None) -> Thresholds:
        """The thresholds a request with this class target is coloured by (itself when the
        request has no class)."""
        if target_ms is None:
            return self
        return Thresholds(warn_ms=target_ms, error_ms=max(self.error_ms, target_ms))

    def level(self, ttft_ms: float | None) -> TtftLevel | None:
        if ttft_ms is None:
            return None
        if ttft_ms >= self.error_ms:
            return TtftLevel.ERROR
        if ttft_ms > self.warn_ms:
            return TtftLevel.WARN
        return TtftLevel.OK


@dataclass(frozen=True, slots=True)
class RequestClass:
    """A kind of request with its own TTFT target (an SLO), e.g. short Q&A vs long generation."""

    name: str
    ttft_target_ms: float
    # A request belongs to the first class whose max_tokens bound it fits; None = catch-all.
    max_output_tokens: int | None = None


DEFAULT_REQUEST_CLASSES: tuple[RequestClass, ...] = (
    RequestClass("short_qa", 500.0, max_output_tokens=512),
    RequestClass("long_generation", 2000.0, max_output_tokens=None),
)


def classify(max_tokens: int, classes: Sequence[RequestClass]) -> RequestClass | None:
    """The first class whose output bound covers max_tokens (the last catch-all otherwise)."""
    for request_class in classes:
        if request_class.max_output_tokens is None or max_tokens <= request_class.max_output_tokens:
            return request_class
    return None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Percentile with linear interpolation between closest ranks (numpy's default method)."""
    return percentile_of_sorted(sorted(values), q)


def percentile_of_sorted(ordered: Sequence[float], q: float) -> float | None:
    """`percentile` of values already in order (one sort for several percentiles)."""
    if not ordered:
        return None
    if len(ordered) == 1:
        return float(ordered[0])
    rank = (len(ordered) - 1) * (q / 100.0)
    low = math.floor(rank)
    high = math.ceil(rank)
    if low == high:
        return float(ordered[low])
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def new_id() -> str:
    """A random UUID (version 4) as 32 hex digits, as `uuid.uuid4().hex` writes it; built here
    because importing uuid imports `platform`, which `ask` would pay for before it sends."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    return raw.hex()


@dataclass(frozen=True, slots=True)
class DroppedMessage:
    index: int
    reason: str


@dataclass(slots=True)
class RequestRecord:
    """Everything measured about one chat request; what the store keeps and `ask --json` shows."""

    model: str
    endpoint_host: str
    streamed: bool
    simulated: bool = False
    id: str = field(default_factory=new_id)
    started_at_epoch: float = field(default_factory=time.time)
    status: RequestStatus = RequestStatus.OK
    error_kind: str | None = None
    error_message: str | None = None
    finish_reason: str | None = None
    ttfb_ms: float | None = None
    ttft_ms: float | None = None
    total_ms: float | None = None
    tpot_ms: float | None = None
    itl_p50_ms: float | None = None
    itl_p95_ms: float | None = None
    output_tokens: int | None = None
    output_tokens_source: str | None = None  # "usage" or "counted"
    output_tokens_per_s: float | None = None
    prompt_tokens_estimated: int | None = None
    prompt_tokens_exact: bool = False  # whether the estimate used the model's own encoding
    prompt_tokens_usage: int | None = None
    completion_tokens_usage: int | None = None
    trim_enabled: bool = False
    tokens_before: int | None = None
    tokens_after: int | None = None
    dropped: list[DroppedMessage] = field(default_factory=list)
    retries: int = 0
    ttft_level: TtftLevel | None = None
    request_class: str | None = None
    ttft_target_ms: float | None = None
    target_met: bool | None = None
    # Where TTFT went (phases.py): phase name -> ms, in order; None when nothing was sent.
    phases_ms: dict[str, float] | None = None
    connection_reused: bool | None = None  # the last attempt went over a kept connection
    # Body adjustments a model needed (dialects.py), e.g. ["max_completion_tokens"].
    adjustments: list[str] = field(default_factory=list)
    # Why the request is in its class (request_classes.py), e.g. "a short question".
    request_class_reason: str | None = None
    # What the server reported about its own side (server_report.py; None: nothing).
    server: dict[str, Any] | None = None
    # The first content or tool-call token, after any reasoning (= TTFT without reasoning).
    time_to_first_answer_ms: float | None = None
    reasoning_tokens: int | None = None  # usage.completion_tokens_details.reasoning_tokens
    # Gaps between tokens longer than chunk_timeout_ms (the reply went on), and the longest
    # gap after the first token (a stalled reply's last, cut-off one included).
    pauses: int = 0
    longest_gap_ms: float | None = None
    # The streamed reply arrived in one burst at the end (a buffering proxy): buffering.py.
    # None: not judged (not streamed, or no tokens).
    buffered: bool | None = None
    # The prompt counted by the server's own tokenizer (server_tokens.py), and which count the
    # record's figures use: "server" (exact) or "estimate" (the local count).
    prompt_tokens_server: int | None = None
    prompt_tokens_source: str | None = None
    # One of a race's requests (engine/race.py): the race, and the target's label in it.
    race_id: str | None = None
    race_target: str | None = None
    # What the client had to work around and the reply survived, one line each (bytes that
    # were not UTF-8, reading paused for a consumer that fell behind).
    notices: list[str] = field(default_factory=list)
    # The server's progress through the prompt before the first token (prefill.py: samples
    # of {at_ms, total, cached, processed, server_ms}, at most 32), and the rate it computed
    # the prompt at (its own timings when it sent them, else from the samples).
    prompt_progress: list[dict[str, Any]] | None = None
    prefill_tokens_per_s: float | None = None
    # Speculative decoding: the share of drafted tokens accepted (None: not reported).
    draft_acceptance: float | None = None
    # The KV cache of the prompt and of the whole context window, for a model whose shape is
    # known (kv_cache.KvModel.figures): None otherwise.
    kv_cache: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["status"] = self.status.value
        data["ttft_level"] = self.ttft_level.value if self.ttft_level else None
        return data


def derive_timings(
    record: RequestRecord,
    *,
    first_token_at: float | None,
    last_token_at: float | None,
    token_times: Sequence[float],
    started_at: float,
    output_tokens: int | None,
    tokens_after_first: int | None = None,
) -> None:
    """Fill TTFT, total, TPOT, ITL and tokens/s from receipt times (perf_counter seconds).

    Without streaming, the caller passes the time the whole body arrived as both first and last
    token time, so TTFT equals total (the first token becomes visible with the whole body).
    `tokens_after_first`: the output tokens that arrived after the first token's chunk (None:
    output_tokens - 1, one token a chunk): TPOT and tokens/s divide the same span by them.
    """
    if first_token_at is None:
        return
    record.ttft_ms = (first_token_at - started_at) * 1000.0
    end = last_token_at if last_token_at is not None else first_token_at
    record.total_ms = (end - started_at) * 1000.0
    gaps = sorted((b - a) * 1000.0 for a, b in pairwise(token_times))
    record.itl_p50_ms = percentile_of_sorted(gaps, 50)
    record.itl_p95_ms = percentile_of_sorted(gaps, 95)
    del gaps  # a float object per token: not kept while the rest is worked out
    record.output_tokens = output_tokens
    if tokens_after_first is None and output_tokens is not None:
        tokens_after_first = output_tokens - 1
    record.tpot_ms, record.output_tokens_per_s = decode_rate(
        tokens_after_first, end - first_token_at
    )


def decode_rate(tokens_after_first: int | None, span_s: float) -> tuple[float | None, float | None]:
    """TPOT (ms) and output tokens/s over one span: from the first token's receipt to the last
    one's, and the tokens that arrived in it (those after the first token's chunk). Every
    surface computes its rates here, so a live figure and the record's agree. (None, None)
    when no token followed the first; tokens/s also when the span is empty."""
    if tokens_after_first is None or tokens_after_first < 1:
        return None, None
    tpot_ms = span_s * 1000.0 / tokens_after_first
    return tpot_ms, (tokens_after_first / span_s if span_s > 0 else None)
