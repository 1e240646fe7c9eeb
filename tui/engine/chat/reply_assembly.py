"""A reply assembled from what the server sent: chunks in, events and the filled record out.

The client (client.py) runs the request: attempts, retries, backoff, cancel and timeouts. What
the chunks of the attempt that answered add up to lives here: the reply text, the receipt time
of each token, the finish reason and usage, the output-token count, and at the end the record's
figures and its status (ok, stalled, ended early, cancelled or error) with its one-line error.
Timing follows docs/metrics.md#definitions: TTFB at the first SSE event of any kind, TTFT at
the first chunk that carries content, reasoning or a tool-call delta, total at the last such
chunk.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from tui.engine.chat import errors as client_errors
from tui.engine.chat.attempt import first_choice, token_parts
from tui.engine.chat.context_overflow import prompt_fit
from tui.engine.chat.errors import ClassifiedError
from tui.engine.chat.events import (
    ClientEvent,
    Delta,
    FirstAnswerToken,
    FirstByte,
    FirstToken,
    Paused,
    PromptProgress,
    UsageReported,
)
from tui.engine.chat.output_count import output_count
from tui.engine.metrics.buffering import is_buffered
from tui.engine.metrics.phases import AttemptTrace, phase_durations
from tui.engine.metrics.prefill import PrefillSample, keep_sample, prefill_rate, prefill_sample
from tui.engine.metrics.record import (
    RequestClass,
    RequestRecord,
    RequestStatus,
    Thresholds,
    derive_timings,
)
from tui.engine.metrics.request_classes import classify_request
from tui.engine.metrics.server_report import (
    ServerReport,
    draft_acceptance,
    server_prefill_rate,
)
from tui.engine.text.joined import JoinedText

if TYPE_CHECKING:
    from tui.engine.chat.request import ChatRequest
    from tui.engine.tokens.counter import TokenCounter


def _count(value: object) -> int | None:
    """A usage figure, when the server sent a number (bool is not one)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class Reply:
    """What the chunks of one request add up to."""

    def __init__(self) -> None:
        self._text = JoinedText()  # content only: the reply text
        self._reasoning = JoinedText()  # the model's thinking, never part of the reply
        self._counted = JoinedText()  # reasoning + tool arguments: counted with the text
        self.first_byte_at: float | None = None
        self.first_token_at: float | None = None
        self.first_answer_at: float | None = None  # first content or tool-call token
        self.server = ServerReport()
        self.last_token_at: float | None = None
        self.token_times = array("d")  # 8 bytes a token, however long the reply
        self.first_chunk_counted = ""  # what the first token's chunk added to the local count
        self.finish_reason: str | None = None
        self.done = False  # `data: [DONE]` arrived
        self.broken_by: str | None = None  # what was wrong with a body that broke off
        self.prompt_tokens_usage: int | None = None
        self.completion_tokens_usage: int | None = None
        self.events_seen = 0
        self.prefill: list[PrefillSample] = []  # the server's prompt progress, bounded

    @property
    def text(self) -> str:
        return self._text.text()

    @property
    def reasoning(self) -> str:
        return self._reasoning.text()

    @property
    def has_reasoning(self) -> bool:
        return bool(self._reasoning)

    def counted_texts(self) -> tuple[str, str]:
        """What the local count counts: the reply text, and the reasoning and tool arguments."""
        return self.text, self._counted.text()

    def on_pause(self, since: float, at: float) -> Paused:
        """No token since `since` for chunk_timeout_ms (the attempt's watchdog saw it at `at`)."""
        return Paused(at, since)

    def on_chunk(self, chunk: dict[str, Any], at: float, streaming: bool) -> list[ClientEvent]:
        """One streamed chunk (or the whole non-stream body), a plain dict from json.loads."""
        events: list[ClientEvent] = []
        self.events_seen += 1
        if self.first_byte_at is None:
            self.first_byte_at = at
            events.append(FirstByte(at))
        if self.first_token_at is None and "prompt_progress" in chunk:
            sample = prefill_sample(chunk["prompt_progress"], at)
            if sample is not None:
                keep_sample(self.prefill, sample)
                events.append(PromptProgress(at, sample, prefill_rate(self.prefill)))
        choice = first_choice(chunk)
        finish_reason = None
        if choice is not None:
            part = choice.get("delta" if streaming else "message")
            if isinstance(part, dict):
                self._on_part(part, at, events)
            finish_reason = choice.get("finish_reason")
            if finish_reason and isinstance(finish_reason, str):
                self.finish_reason = finish_reason
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            prompt_tokens = _count(usage.get("prompt_tokens"))
            completion_tokens = _count(usage.get("completion_tokens"))
            self.prompt_tokens_usage = prompt_tokens
            self.completion_tokens_usage = completion_tokens
            events.append(UsageReported(at, prompt_tokens, completion_tokens))
        if choice is None or finish_reason or usage is not None or not streaming:
            # The server's own figures ride the last chunks (the finish chunk, the usage chunk
            # with no choices) or the whole body; token chunks, the hot path, are not read.
            self.server.take(chunk)
        return events

    def _on_part(self, part: dict[str, Any], at: float, events: list[ClientEvent]) -> None:
        content, reasoning, tool_calls = token_parts(part)
        if not (content or reasoning or tool_calls):
            return
        if self.first_token_at is None:
            self.first_token_at = at
            events.append(FirstToken(at))
        self.last_token_at = at
        self.token_times.append(at)
        if reasoning:
            self._reasoning.add(reasoning)
            self._counted.add(reasoning)
            events.append(Delta(reasoning, at, "reasoning"))
        if self.first_answer_at is None and (content or tool_calls):
            self.first_answer_at = at
            events.append(FirstAnswerToken(at))
        for i, call in enumerate(tool_calls):
            function = call.get("function") if isinstance(call, dict) else None
            fragment = ""
            if isinstance(function, dict):
                name, arguments = function.get("name"), function.get("arguments")
                fragment = (name if isinstance(name, str) else "") + (
                    arguments if isinstance(arguments, str) else ""
                )
            self._counted.add(fragment)
            events.append(Delta(fragment, at, "tool_call", new_chunk=not (reasoning or i)))
        if content:
            self._text.add(content)
            events.append(Delta(content, at, "content", new_chunk=not (reasoning or tool_calls)))
        if len(self.token_times) == 1:
            self.first_chunk_counted = self._counted.text() + self._text.text()


def new_record(
    request: ChatRequest,
    *,
    endpoint_host: str,
    simulated: bool,
    request_classes: Sequence[RequestClass],
) -> RequestRecord:
    """The record of `request` before anything is sent: what was asked, where, and its class."""
    trim = request.trim
    record = RequestRecord(
        model=request.model,
        endpoint_host=endpoint_host,
        streamed=request.stream,
        simulated=simulated,
        prompt_tokens_estimated=request.prompt_tokens_estimated,
        prompt_tokens_exact=request.prompt_tokens_exact,
        prompt_tokens_source=request.prompt_tokens_source,
        trim_enabled=trim is not None or request.trim_fits,
    )
    if trim is not None:
        record.tokens_before = trim.tokens_before
        record.tokens_after = trim.tokens_after
        record.dropped = list(trim.dropped)
    else:
        counted = request.prompt_tokens_counted
        record.tokens_before = record.tokens_after = counted
    chosen = classify_request(
        request.messages, request.max_tokens, request.max_tokens_asked, request_classes
    )
    if chosen is not None:
        record.request_class = chosen.request_class.name
        record.ttft_target_ms = chosen.request_class.ttft_target_ms
        record.request_class_reason = chosen.reason
    return record


@dataclass(frozen=True, slots=True)
class Limits:
    """What the end of a request is judged against, and named in its one-line error."""

    url: str  # the chat completions URL (a timeout names its host)
    timeout_s: float
    chunk_timeout_ms: float
    # The gap that ends a stream as stalled (None: chunk_timeout_ms), and where it is set, for
    # the stall's message (e.g. "stall_timeout_ms in ~/.config/firsttoken/config.toml").
    stall_timeout_ms: float | None = None
    stall_setting: str | None = None


def finish_record(
    record: RequestRecord,
    reply: Reply,
    request: ChatRequest,
    *,
    started_at: float | None,
    outcome: str,
    failure: ClassifiedError | None,
    broke_off: bool = False,
    limits: Limits,
    thresholds: Thresholds,
    counter: TokenCounter | None,
    scrub: Callable[[ClassifiedError], ClassifiedError],
    trace: AttemptTrace | None = None,
    finished_at: float | None = None,
) -> None:
    """Fill the record's figures and its status from the reply and how the request ended
    (`outcome`: eof, error, timeout, stalled or cancelled; `failure`: a classified error;
    `broke_off`: the connection closed after the response head; `trace`: the last attempt's
    stamps, for the phases; `finished_at`: when it ended, the end of a stalled reply's last
    gap)."""
    record.finish_reason = reply.finish_reason
    record.prompt_tokens_usage = reply.prompt_tokens_usage
    record.completion_tokens_usage = reply.completion_tokens_usage
    record.server = reply.server.as_dict()
    if started_at is not None and trace is not None:
        record.connection_reused = trace.reused
        record.phases_ms = phase_durations(
            started_at,
            trace,
            first_byte_at=reply.first_byte_at,
            first_token_at=reply.first_token_at,
            streamed=request.stream,
        )
    if record.server is not None:
        record.reasoning_tokens = record.server["reasoning_tokens"]
        record.draft_acceptance = draft_acceptance(record.server)
    record.prefill_tokens_per_s = server_prefill_rate(record.server) or prefill_rate(reply.prefill)
    if started_at is not None:
        if reply.prefill:
            record.prompt_progress = [sample.as_dict(started_at) for sample in reply.prefill]
        if reply.first_byte_at is not None:
            record.ttfb_ms = (reply.first_byte_at - started_at) * 1000.0
        count = output_count(reply, counter, record.reasoning_tokens)
        if count is not None:
            record.output_tokens_source = count.source
        derive_timings(
            record,
            first_token_at=reply.first_token_at,
            last_token_at=reply.last_token_at,
            token_times=reply.token_times,
            started_at=started_at,
            output_tokens=count.tokens if count is not None else None,
            tokens_after_first=count.after_first if count is not None else None,
        )
        if reply.first_answer_at is not None:
            record.time_to_first_answer_ms = (reply.first_answer_at - started_at) * 1000.0
        if not request.stream:
            # TTFT = total by definition here; a per-token figure would be invented.
            record.tpot_ms = None
            record.output_tokens_per_s = None
        else:
            # A stall's or a cancel's last gap was still open when the reply ended: it counts.
            open_until = finished_at if outcome in ("stalled", "cancelled") else None
            _gaps(
                record,
                reply.token_times,
                limits.chunk_timeout_ms,
                open_until,
                open_gap_is_pause=outcome == "cancelled",
            )
            decode = record.server["decode_ms"] if record.server is not None else None
            record.buffered = is_buffered(
                streamed=True,
                started_at=started_at,
                token_times=reply.token_times,
                server_decode_ms=decode,
            )
    # One verdict: the class target is the ok/warn boundary (metrics.Thresholds.for_target).
    record.ttft_level = thresholds.for_target(record.ttft_target_ms).level(record.ttft_ms)
    if record.ttft_target_ms is not None and record.ttft_ms is not None:
        record.target_met = record.ttft_ms <= record.ttft_target_ms
    _calibrate(request, reply, counter)

    classified: ClassifiedError | None = None
    if outcome == "cancelled":
        record.status = RequestStatus.CANCELLED
    elif outcome == "stalled":
        record.status = RequestStatus.STALLED
        if limits.stall_timeout_ms is None:
            classified = client_errors.stalled_error(limits.chunk_timeout_ms)
        else:
            classified = client_errors.stalled_error(
                limits.stall_timeout_ms, setting=limits.stall_setting or "stall_timeout_ms"
            )
    elif outcome == "timeout":
        record.status = RequestStatus.ERROR
        classified = client_errors.timeout_error(limits.url, limits.timeout_s)
    elif failure is not None:
        record.status = RequestStatus.ERROR
        classified = failure
    elif request.stream and reply.finish_reason is None and not reply.done:
        # A stream that ends without a finish reason or [DONE] did not complete.
        record.status = RequestStatus.ENDED_EARLY
        if reply.broken_by is not None:
            classified = scrub(client_errors.broken_body_error(reply.broken_by))
        elif reply.first_token_at is not None:
            classified = client_errors.ended_early_error(broke_off)
        else:
            classified = client_errors.empty_stream_error(
                events=reply.events_seen, broke_off=broke_off, fit=prompt_fit(request)
            )
    else:
        record.status = RequestStatus.OK
    if classified is not None:
        record.error_kind = classified.kind
        record.error_message = classified.message


def _gaps(
    record: RequestRecord,
    token_times: Sequence[float],
    chunk_timeout_ms: float,
    open_until: float | None,
    *,
    open_gap_is_pause: bool,
) -> None:
    """The pauses (gaps over chunk_timeout_ms) and the longest gap, from the receipt times. A
    reply that ended inside a gap (`open_until`: given up as stalled, or cancelled) counts that
    gap as its longest; a cancelled one counts it as a pause too (the user may have cancelled
    because of it), a stall is reported as the stall instead."""
    longest = 0.0
    pauses = 0
    for before, after in pairwise(token_times):
        gap = (after - before) * 1000.0
        if gap > chunk_timeout_ms:
            pauses += 1
        longest = max(longest, gap)
    if open_until is not None and token_times:
        gap = (open_until - token_times[-1]) * 1000.0
        if open_gap_is_pause and gap > chunk_timeout_ms:
            pauses += 1
        longest = max(longest, gap)
    ended_in_gap = open_until is not None and bool(token_times)
    record.pauses = pauses
    record.longest_gap_ms = longest if len(token_times) > 1 or ended_in_gap else None


def _calibrate(request: ChatRequest, reply: Reply, counter: TokenCounter | None) -> None:
    counted = request.prompt_tokens_counted
    actual = reply.prompt_tokens_usage
    if counter is None or counted is None or actual is None or actual <= 0:
        return
    if request.prompt_tokens_source not in (None, "estimate"):
        return  # the server counted it: nothing to learn about the local estimate
    record_usage = getattr(counter, "record_usage", None)
    if record_usage is not None:
        record_usage(counted, actual)
