"""The measured chat client: a ChatRequest in, timestamped events out, one Finished at the end.

One code path for streaming on and off, over `openai.AsyncOpenAI(max_retries=0)`: the SDK's own
silent retries would hide time, so retries happen here, visibly (Retrying events), and count in
TTFT. The SDK builds and sends the request and raises status errors; the body is read by
client_attempt.py as plain dicts (a pydantic chunk per event was most of the client's CPU).
Timing follows DESIGN.md exactly:

- request start: `perf_counter()` just before the request is handed to the SDK (first attempt);
- TTFB: the first SSE event of any kind (role-only chunks count), or the body without streaming;
- TTFT: the first chunk carrying content, reasoning or a tool-call delta; without streaming the
  time the body arrived (TTFT = total, `record.streamed` is False so the UI can say so);
- total: the last token-carrying chunk (the trailing usage chunk does not extend it);
- TPOT / ITL / tokens per second: `metrics.derive_timings`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

import openai

from tui.engine import client_errors
from tui.engine.asyncio_network import http_client_on_asyncio
from tui.engine.base_url import split_base_url
from tui.engine.client_attempt import (
    CHUNK,
    DONE,
    END,
    OPENED,
    STARTED,
    Attempt,
    first_choice,
    token_parts,
)
from tui.engine.client_body import BrokenBody
from tui.engine.client_errors import ClassifiedError
from tui.engine.events import (
    ClientEvent,
    Delta,
    Finished,
    FirstByte,
    FirstToken,
    RequestStarted,
    Retrying,
    UsageReported,
)
from tui.engine.metrics import (
    DEFAULT_REQUEST_CLASSES,
    RequestClass,
    RequestRecord,
    RequestStatus,
    Thresholds,
    classify,
    derive_timings,
)
from tui.engine.redact import mask_url, redact_text, url_secrets
from tui.engine.wire_messages import wire_messages

if TYPE_CHECKING:
    from tui.engine.tokens import TokenCounter
    from tui.engine.trim import TrimResult

perf_counter = time.perf_counter

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 8.0


@dataclass(frozen=True)
class ChatRequest:
    messages: list[dict[str, Any]]
    model: str
    stream: bool
    temperature: float
    max_tokens: int
    trim: TrimResult | None = None
    prompt_tokens_estimated: int | None = None  # calibrated when the counter has a ratio
    prompt_tokens_exact: bool = False
    # The raw (uncalibrated) count: what calibration compares with usage.prompt_tokens.
    prompt_tokens_counted: int | None = None

    def body(self) -> dict[str, Any]:
        """The request body as the article sends it, its messages in the form every server
        accepts (wire_messages.py)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": wire_messages(self.messages),
            "stream": self.stream,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        return body


class ClientError(Exception):
    """A one-line, key-free error from list_models(); `kind` as in client_errors."""

    def __init__(self, classified: ClassifiedError) -> None:
        super().__init__(classified.message)
        self.kind = classified.kind


def endpoint_host(base_url: str) -> str:
    try:
        hostname = urlsplit(base_url).hostname
    except ValueError:
        hostname = None
    return client_errors.host_port(base_url) if hostname else mask_url(base_url)


def _count(value: object) -> int | None:
    """A usage figure, when the server sent a number (bool is not one)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def backoff_delay(retry_number: int, retry_after_s: float | None) -> float:
    """Exponential backoff with jitter; a server's Retry-After wins (capped)."""
    if retry_after_s is not None:
        return min(retry_after_s, client_errors.RETRY_AFTER_CAP_S)
    delay = min(BACKOFF_CAP_S, BACKOFF_BASE_S * (2**retry_number))
    return delay * (0.5 + random.random() / 2)


class _Reply:
    """What the chunks of one request add up to."""

    def __init__(self) -> None:
        self.parts: list[str] = []  # content only: the reply text
        self.counted_parts: list[str] = []  # content + reasoning + tool arguments: local count
        self.first_byte_at: float | None = None
        self.first_token_at: float | None = None
        self.last_token_at: float | None = None
        self.token_times: list[float] = []
        self.finish_reason: str | None = None
        self.done = False  # `data: [DONE]` arrived
        self.broken_by: str | None = None  # what was wrong with a body that broke off
        self.prompt_tokens_usage: int | None = None
        self.completion_tokens_usage: int | None = None
        self.events_seen = 0

    @property
    def text(self) -> str:
        return "".join(self.parts)


class ChatClient:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        timeout_s: float,
        chunk_timeout_ms: float,
        thresholds: Thresholds | None = None,
        request_classes: Sequence[RequestClass] = DEFAULT_REQUEST_CLASSES,
        max_retries: int = 2,
        simulated: bool = False,
        counter: TokenCounter | None = None,
    ) -> None:
        # The query (a key or an API version some gateways take there) goes with every request
        # as the SDK's default_query: joined onto the whole string, paths would land after it.
        self.base_url, query = split_base_url(base_url)
        # How a message names the URL asked: with the query, masked there (client_errors).
        self._query = "?" + urlencode(query) if query else ""
        self._api_key = api_key
        self._secrets = tuple(
            secret for secret in (api_key, *url_secrets(base_url)) if secret and len(secret) >= 4
        )
        self.timeout_s = float(timeout_s)
        self.chunk_timeout_ms = float(chunk_timeout_ms)
        self.thresholds = thresholds or Thresholds()
        self.request_classes = tuple(request_classes)
        self.max_retries = max(0, int(max_retries))
        self.simulated = simulated
        self.counter = counter
        self.host = endpoint_host(self.base_url)
        # Our own watchdog enforces timeout_seconds before the first token and chunk_timeout_ms
        # after it; the SDK's timeout is only a backstop for a watchdog that could not fire.
        backstop = max(self.timeout_s, self.chunk_timeout_ms / 1000.0) + 5.0
        self._sdk = openai.AsyncOpenAI(
            base_url=self.base_url,
            # The SDK refuses to start without a key; local servers accept any.
            api_key=api_key or "no-key",
            default_query=query or None,
            max_retries=0,
            timeout=openai.Timeout(backstop, connect=self.timeout_s),
            http_client=http_client_on_asyncio(),
        )

    async def aclose(self) -> None:
        await self._sdk.close()

    async def list_models(self) -> list[str]:
        try:
            page = await asyncio.wait_for(self._sdk.models.list(), self.timeout_s)
        except asyncio.TimeoutError:
            raise ClientError(
                client_errors.timeout_error(self.base_url + "/models", self.timeout_s)
            ) from None
        except Exception as error:  # one line, never a traceback
            raise ClientError(self._classify(error, "/models")) from None
        return [model.id for model in page.data]

    # -- the request ------------------------------------------------------------------------

    def _classify(
        self,
        error: BaseException,
        path: str = "/chat/completions",
        trimmed_to: int | None = None,
    ) -> ClassifiedError:
        classified = client_errors.classify(
            error, self.base_url + path + self._query, self._api_key, trimmed_to=trimmed_to
        )
        return self._scrub(classified)

    def _scrub(self, classified: ClassifiedError) -> ClassifiedError:
        """The message without the key or the URL's credentials (a server may echo them)."""
        message = redact_text(classified.message, self._secrets)
        if message == classified.message:
            return classified
        return ClassifiedError(
            classified.kind, message, classified.retryable, classified.retry_after_s
        )

    def _new_record(self, request: ChatRequest) -> RequestRecord:
        trim = request.trim
        record = RequestRecord(
            model=request.model,
            endpoint_host=self.host,
            streamed=request.stream,
            simulated=self.simulated,
            prompt_tokens_estimated=request.prompt_tokens_estimated,
            prompt_tokens_exact=request.prompt_tokens_exact,
            trim_enabled=trim is not None,
        )
        if trim is not None:
            record.tokens_before = trim.tokens_before
            record.tokens_after = trim.tokens_after
            record.dropped = list(trim.dropped)
        else:
            counted = request.prompt_tokens_counted
            record.tokens_before = record.tokens_after = counted
        request_class = classify(request.max_tokens, self.request_classes)
        if request_class is not None:
            record.request_class = request_class.name
            record.ttft_target_ms = request_class.ttft_target_ms
        return record

    async def stream(
        self, request: ChatRequest, cancel: asyncio.Event | None = None
    ) -> AsyncIterator[ClientEvent]:
        """Events for one request; always ends with exactly one Finished (see events.py)."""
        record = self._new_record(request)
        reply = _Reply()
        queue: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        attempt: Attempt | None = None
        cancel_waiter: asyncio.Task[Any] | None = None
        started_at: float | None = None
        outcome = "eof"
        failure: ClassifiedError | None = None
        body = request.body()
        trimmed_to = request.trim.budget if request.trim is not None else None
        broke_off = False  # the response head arrived, then the connection closed mid-body
        # The raw response, body unread: the SDK still builds the URL and headers, applies the
        # timeouts and raises APIStatusError for 4xx/5xx before returning it.
        raw_create = self._sdk.chat.completions.with_streaming_response.create

        def open_response() -> Awaitable[Any]:
            # The context manager's __aenter__ sends the request; its __aexit__ would only close
            # the response, which the attempt does itself in every case.
            return raw_create(**body).__aenter__()

        def on_cancel(_: object) -> None:
            if attempt is not None:
                attempt.abort("cancelled")

        try:
            if cancel is not None:
                if cancel.is_set():
                    record.status = RequestStatus.CANCELLED
                    yield Finished(perf_counter(), record, "")
                    return
                cancel_waiter = asyncio.ensure_future(cancel.wait())
                cancel_waiter.add_done_callback(on_cancel)

            for attempt_number in range(self.max_retries + 1):
                attempt = Attempt(
                    open_response,
                    streaming=request.stream,
                    timeout_s=self.timeout_s,
                    chunk_timeout_s=self.chunk_timeout_ms / 1000.0,
                    queue=queue,
                )
                attempt.start()
                if cancel is not None and cancel.is_set():
                    attempt.abort("cancelled")
                outcome, error = "eof", None
                opened = broke_off = False
                while True:
                    item = await queue.get()
                    tag = item[0]
                    if tag == CHUNK:
                        for event in self._on_chunk(item[1], item[2], request.stream, reply):
                            yield event
                    elif tag == STARTED:
                        if started_at is None:
                            started_at = item[1]
                        yield RequestStarted(item[1], attempt_number)
                    elif tag == END:
                        outcome, error = item[1], item[2]
                        break
                    elif tag == OPENED:
                        opened = True  # headers only; TTFB waits for the first SSE event
                    elif tag == DONE:
                        reply.done = True
                await attempt.wait_closed()

                failure = None
                if outcome == "error" and error is not None:
                    failure = self._classify(error, trimmed_to=trimmed_to)
                    if opened and failure.kind in ("connection", "dns"):
                        # The stream was open and broke off (e.g. an incomplete chunked body, or
                        # llama.cpp's empty answer to an over-long prompt): an early end, not a
                        # failed connection, and not worth retrying.
                        outcome, failure, broke_off = "eof", None, True
                        if isinstance(error, BrokenBody):
                            reply.broken_by = error.message
                retry = (
                    failure is not None
                    and failure.retryable
                    and not opened
                    and attempt_number < self.max_retries
                )
                if not retry or failure is None:
                    break
                delay = backoff_delay(attempt_number, failure.retry_after_s)
                record.retries += 1
                yield Retrying(perf_counter(), attempt_number + 1, delay, failure.message)
                if cancel_waiter is not None:
                    await asyncio.wait((cancel_waiter,), timeout=delay)
                    if cancel is not None and cancel.is_set():
                        outcome = "cancelled"
                        break
                else:
                    await asyncio.sleep(delay)
                queue = asyncio.Queue()

            finished_at = perf_counter()
            self._finish(record, reply, request, started_at, outcome, failure, broke_off)
            yield Finished(finished_at, record, reply.text)
        finally:
            if cancel_waiter is not None:
                cancel_waiter.remove_done_callback(on_cancel)
                cancel_waiter.cancel()
            if attempt is not None:
                await attempt.wait_closed()

    def _on_chunk(
        self, chunk: dict[str, Any], at: float, streaming: bool, reply: _Reply
    ) -> list[ClientEvent]:
        """One streamed chunk (or the whole non-stream body), a plain dict from json.loads."""
        events: list[ClientEvent] = []
        reply.events_seen += 1
        if reply.first_byte_at is None:
            reply.first_byte_at = at
            events.append(FirstByte(at))
        choice = first_choice(chunk)
        if choice is not None:
            part = choice.get("delta" if streaming else "message")
            if isinstance(part, dict):
                self._on_part(part, at, reply, events)
            finish_reason = choice.get("finish_reason")
            if finish_reason and isinstance(finish_reason, str):
                reply.finish_reason = finish_reason
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            prompt_tokens = _count(usage.get("prompt_tokens"))
            completion_tokens = _count(usage.get("completion_tokens"))
            reply.prompt_tokens_usage = prompt_tokens
            reply.completion_tokens_usage = completion_tokens
            events.append(UsageReported(at, prompt_tokens, completion_tokens))
        return events

    def _on_part(
        self, part: dict[str, Any], at: float, reply: _Reply, events: list[ClientEvent]
    ) -> None:
        content, reasoning, tool_calls = token_parts(part)
        if not (content or reasoning or tool_calls):
            return
        if reply.first_token_at is None:
            reply.first_token_at = at
            events.append(FirstToken(at))
        reply.last_token_at = at
        reply.token_times.append(at)
        if reasoning:
            reply.counted_parts.append(reasoning)
            events.append(Delta(reasoning, at, "reasoning"))
        for call in tool_calls:
            function = call.get("function") if isinstance(call, dict) else None
            fragment = ""
            if isinstance(function, dict):
                name, arguments = function.get("name"), function.get("arguments")
                fragment = (name if isinstance(name, str) else "") + (
                    arguments if isinstance(arguments, str) else ""
                )
            reply.counted_parts.append(fragment)
            events.append(Delta(fragment, at, "tool_call"))
        if content:
            reply.parts.append(content)
            reply.counted_parts.append(content)
            events.append(Delta(content, at, "content"))

    # -- the record ---------------------------------------------------------------------------

    def _output_tokens(self, reply: _Reply, record: RequestRecord) -> int | None:
        if reply.completion_tokens_usage is not None:
            record.output_tokens_source = "usage"
            return reply.completion_tokens_usage
        if not reply.token_times:
            return None
        record.output_tokens_source = "counted"
        text = "".join(reply.counted_parts)
        if self.counter is not None:
            return self.counter.count_text(text)
        return len(reply.token_times)  # one token per chunk is what most servers send

    def _finish(
        self,
        record: RequestRecord,
        reply: _Reply,
        request: ChatRequest,
        started_at: float | None,
        outcome: str,
        failure: ClassifiedError | None,
        broke_off: bool = False,
    ) -> None:
        record.finish_reason = reply.finish_reason
        record.prompt_tokens_usage = reply.prompt_tokens_usage
        record.completion_tokens_usage = reply.completion_tokens_usage
        if started_at is not None:
            if reply.first_byte_at is not None:
                record.ttfb_ms = (reply.first_byte_at - started_at) * 1000.0
            derive_timings(
                record,
                first_token_at=reply.first_token_at,
                last_token_at=reply.last_token_at,
                token_times=reply.token_times,
                started_at=started_at,
                output_tokens=self._output_tokens(reply, record),
            )
            if not request.stream:
                # TTFT = total by definition here; a per-token figure would be invented.
                record.tpot_ms = None
                record.output_tokens_per_s = None
        record.ttft_level = self.thresholds.level(record.ttft_ms)
        if record.ttft_target_ms is not None and record.ttft_ms is not None:
            record.target_met = record.ttft_ms <= record.ttft_target_ms
        self._calibrate(request, reply)

        classified: ClassifiedError | None = None
        if outcome == "cancelled":
            record.status = RequestStatus.CANCELLED
        elif outcome == "stalled":
            record.status = RequestStatus.STALLED
            classified = client_errors.stalled_error(self.chunk_timeout_ms)
        elif outcome == "timeout":
            record.status = RequestStatus.ERROR
            classified = client_errors.timeout_error(
                self.base_url + "/chat/completions", self.timeout_s
            )
        elif failure is not None:
            record.status = RequestStatus.ERROR
            classified = failure
        elif request.stream and reply.finish_reason is None and not reply.done:
            # DESIGN: a stream that ends without a finish reason or [DONE] did not complete.
            record.status = RequestStatus.ENDED_EARLY
            if reply.broken_by is not None:
                classified = self._scrub(client_errors.broken_body_error(reply.broken_by))
            elif reply.first_token_at is not None:
                classified = client_errors.ended_early_error(broke_off)
            else:
                trimmed_to = request.trim.budget if request.trim is not None else None
                classified = client_errors.empty_stream_error(
                    events=reply.events_seen, broke_off=broke_off, trimmed_to=trimmed_to
                )
        else:
            record.status = RequestStatus.OK
        if classified is not None:
            record.error_kind = classified.kind
            record.error_message = classified.message

    def _calibrate(self, request: ChatRequest, reply: _Reply) -> None:
        counter = self.counter
        counted = request.prompt_tokens_counted
        actual = reply.prompt_tokens_usage
        if counter is None or counted is None or actual is None or actual <= 0:
            return
        record_usage = getattr(counter, "record_usage", None)
        if record_usage is not None:
            record_usage(counted, actual)
