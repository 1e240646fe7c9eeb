"""One HTTP attempt, run as its own task, stamping every SSE event the moment its bytes arrive.

Why a separate task: the consumer (the app, `ask`) may be slow between events; timestamps taken
here do not depend on it. The attempt is the only place that awaits the network, so a watchdog
can end it at any moment with `Task.cancel()` (a deadline, a stall, the user's cancel) and the
`finally` closes the response: no leaked connections.

firsttoken's HTTP client (tui/engine/http/) sends the request, stamping each phase of it into
`stamps`, and returns at the response head; a 3xx/4xx/5xx answer becomes a StatusError with its
body's text. The body is read straight off the connection (client_body.py) and each SSE event
becomes a plain dict with one `json.loads`, since building an object per chunk is most of a
long reply's client CPU (docs/performance.md#the-send-path). Reading the events ourselves also
shows `data: [DONE]`, so an early end (no finish reason and no [DONE]) can be told from a
complete one.

A single lazy timer keeps the per-chunk cost at one float store: the chunk deadline moves with
every token, and the timer only re-arms itself when it fires early.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from tui.engine.chat.stream_body import read_events
from tui.engine.http import Exchange, HttpClient, Request, ServerReportedError, StatusError

# Queue items, each a tuple starting with one of these tags.
STARTED = 0  # (STARTED, at)              the request is handed to the HTTP client
OPENED = 1  # (OPENED, at)                response headers arrived (streaming only)
CHUNK = 2  # (CHUNK, chunk, at)           one SSE event as a dict, or the whole non-stream body
END = 3  # (END, outcome, error, at)      outcome: eof | error | timeout | stalled | cancelled
DONE = 4  # (DONE, at)                    `data: [DONE]` arrived: the server says it is complete
PAUSED = 5  # (PAUSED, since, at)         no chunk since `since` for chunk_timeout_s; read on

# After [DONE], the rest of the body (the chunked terminator, usually in the same read) is read
# so the connection can be reused, but never for longer than this.
DRAIN_S = 0.1
# An error answer's body is read up to this much for its message; the rest is not needed.
ERROR_BODY_LIMIT = 64 * 1024
# Chunks parsed but not yet taken by the consumer: past BACKLOG_MAX the socket is no longer
# read until the backlog is down to BACKLOG_RESUME, so a server that sends faster than the
# reply can be shown costs bounded memory (the kernel's buffers and TCP hold the rest).
BACKLOG_MAX = 512
BACKLOG_RESUME = 128

perf_counter = time.perf_counter


def token_parts(part: dict[str, Any]) -> tuple[str, str, list[Any]]:
    """(content, reasoning, tool calls) of a delta or a whole message; empty when absent.

    A server's odd types (a null, a number) count as absent rather than breaking the stream.
    """
    content = part.get("content")
    reasoning = part.get("reasoning_content") or part.get("reasoning")
    tool_calls = part.get("tool_calls")
    return (
        content if isinstance(content, str) else "",
        reasoning if isinstance(reasoning, str) else "",
        tool_calls if isinstance(tool_calls, list) else [],
    )


def first_choice(chunk: dict[str, Any]) -> dict[str, Any] | None:
    choices = chunk.get("choices")
    if choices and isinstance(choices, list):
        choice = choices[0]
        if isinstance(choice, dict):
            return choice
    return None


def has_token(chunk: dict[str, Any]) -> bool:
    """Whether a streamed chunk carries content, reasoning or a tool-call delta: it counts for
    TTFT (docs/metrics.md#definitions)."""
    choice = first_choice(chunk)
    delta = choice.get("delta") if choice is not None else None
    if not isinstance(delta, dict):
        return False
    content, reasoning, tool_calls = token_parts(delta)
    return bool(content or reasoning or tool_calls)


def parse_object(data: bytes, on_replaced: Callable[[], None] | None = None) -> dict[str, Any]:
    """One SSE event's data (or a whole body) as a dict.

    Bytes that are not UTF-8 are replaced (U+FFFD), as the SDK decodes them, and `on_replaced`
    is told. Not JSON, or JSON that is not an object: `json.JSONDecodeError` (classified as
    bad_json). An `{"error": ...}` object: ServerReportedError with its message.
    """
    try:
        parsed = json.loads(data)
    except json.JSONDecodeError:
        raise
    except UnicodeDecodeError:
        parsed = json.loads(data.decode("utf-8", "replace"))
        if on_replaced is not None:
            on_replaced()
    if not isinstance(parsed, dict):
        raise json.JSONDecodeError("not a JSON object", data.decode(errors="replace"), 0)
    reported = parsed.get("error")
    if reported:
        # An object with a message (OpenAI, vLLM, llama.cpp), or some servers send the message.
        message = reported.get("message") if isinstance(reported, dict) else reported
        if not isinstance(message, str) or not message:
            message = "An error occurred during streaming"
        raise ServerReportedError(message, reported)
    return parsed


class Attempt:
    """Sends one request over `http` and reads its body into `queue` until an END item.

    `stamps` gets each phase the HTTP client stamps (connection set-up, request sent, response
    head); `reused` says whether the request went over a kept connection.
    """

    def __init__(
        self,
        http: HttpClient,
        request: Request,
        *,
        streaming: bool,
        timeout_s: float,
        chunk_timeout_s: float,
        queue: asyncio.Queue[tuple[Any, ...]],
        stall_timeout_s: float | None = None,
    ) -> None:
        self._http = http
        self._request = request
        self._streaming = streaming
        self._timeout_s = timeout_s
        self._chunk_timeout_s = chunk_timeout_s
        # A gap over chunk_timeout_s is reported (PAUSED) and the reply read on; only a gap over
        # stall_timeout_s ends it as stalled. None: the chunk timeout is the stall limit too.
        self._stall_timeout_s = stall_timeout_s
        self._gap_reason = "stalled" if stall_timeout_s is None else "paused"
        self._queue = queue
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = 0.0
        self._deadline_reason = "timeout"
        self.abort_reason: str | None = None
        self.started_at: float | None = None
        self.stamps: list[tuple[str, float]] = []
        self.reused: bool | None = None  # None until a connection was had
        self._ended = False
        self._done = False  # [DONE] arrived: whatever ends the attempt now, the reply is whole
        self._seen_token = False  # the chunk clock (chunk_timeout_s) has started
        self._exchange: Exchange | None = None
        self.held_back = False  # reading paused: the consumer is BACKLOG_MAX chunks behind
        self.hold_backs = 0  # how many times that happened
        self.replaced = 0  # events with bytes that were not UTF-8 (replaced, the reply read on)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())
        self._task.add_done_callback(self._on_done)

    def _on_done(self, _task: asyncio.Task[None]) -> None:
        # A task cancelled before its first step never runs _run: report the END here.
        if not self._ended:
            self._end(self.abort_reason or "cancelled", None)

    def _end(self, outcome: str, error: BaseException | None) -> None:
        if not self._ended:
            self._ended = True
            self._queue.put_nowait((END, outcome, error, perf_counter()))

    def abort(self, reason: str) -> None:
        """End the attempt now (idempotent); the queue gets END with this reason."""
        if self.abort_reason is None and self._task is not None and not self._task.done():
            self.abort_reason = reason
            self._task.cancel()

    async def wait_closed(self) -> None:
        """Abort if still running and wait until the response is closed."""
        task = self._task
        if task is None:
            return
        if not task.done() and not self._ended:
            # After END only the closing is left: let it finish rather than interrupt it.
            self.abort("cancelled")
        # asyncio.wait never raises the task's outcome (reported through the queue) and lets a
        # cancellation of the caller propagate.
        await asyncio.wait((task,))

    def catch_up(self) -> None:
        """The consumer took a chunk while reading was paused: read on once it has caught up."""
        if self._queue.qsize() > BACKLOG_RESUME or self._exchange is None:
            return
        self.held_back = False
        self._exchange.hold_back(False)
        if self._seen_token:  # the time the reading was paused was not the server's gap
            self._deadline = max(self._deadline, perf_counter() + self._chunk_timeout_s)

    def _rearm(self, deadline: float, reason: str) -> None:
        """Replace the timer (a deadline that moves later only needs `self._deadline`)."""
        if self._timer is not None:
            self._timer.cancel()
        self._deadline = deadline
        self._deadline_reason = reason
        loop = asyncio.get_running_loop()
        # call_at uses loop.time() (monotonic); perf_counter is monotonic too, convert.
        self._timer = loop.call_at(loop.time() + (deadline - perf_counter()), self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if self.held_back and self._deadline_reason in ("paused", "stalled"):
            # The gap is the consumer's (reading is paused), not the server's.
            self._deadline = perf_counter() + self._chunk_timeout_s
        remaining = self._deadline - perf_counter()
        if remaining > 0.0005:  # the deadline moved while we slept: sleep again
            loop = asyncio.get_running_loop()
            self._timer = loop.call_at(loop.time() + remaining, self._on_timer)
            return
        if self._deadline_reason == "paused" and self._stall_timeout_s is not None:
            # A pause, not a stall: say so and wait on, up to the stall limit from the last chunk.
            since = self._deadline - self._chunk_timeout_s
            self._queue.put_nowait((PAUSED, since, perf_counter()))
            self._rearm(since + self._stall_timeout_s, "stalled")
            return
        self.abort(self._deadline_reason)

    async def _run(self) -> None:
        put = self._queue.put_nowait
        exchange: Exchange | None = None
        started = self.started_at = perf_counter()
        self._rearm(started + self._timeout_s, "timeout")
        put((STARTED, started))
        try:
            exchange = self._exchange = await self._http.open(self._request, self.stamps)
            self.reused = exchange.reused
            if exchange.status >= 300:
                text, _ = await exchange.read(ERROR_BODY_LIMIT)
                head = exchange.head
                raise StatusError(
                    head.status, head.reason, head.headers, text.decode("utf-8", "replace")
                )
            if self._streaming:
                put((OPENED, exchange.head_at))
                await read_events(exchange, self._take_event)
            else:
                body, at = await exchange.read()
                put((CHUNK, parse_object(body, self._on_replaced), at))
            self._end("eof", None)
        except asyncio.CancelledError:
            self._end("eof" if self._done else (self.abort_reason or "cancelled"), None)
        except Exception as error:  # classified by the client, never shown raw
            if self._done:  # [DONE] came: a body cut short after it lost nothing
                self._end("eof", None)
            else:
                self._end("error", error)
        finally:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._exchange = None
            if exchange is not None:
                exchange.close()

    def _on_replaced(self) -> None:
        self.replaced += 1

    def _take_event(self, event: bytes, at: float) -> bool:
        """One event's data into the queue; True at `data: [DONE]` (take no more)."""
        if not event:
            # `data:` with nothing, a keep-alive some servers send: an event (TTFB counts any),
            # but no chunk to parse and no token for the chunk clock.
            self._queue.put_nowait((CHUNK, {}, at))
            return False
        if event.startswith(b"[DONE]"):
            self._done = True
            self._queue.put_nowait((DONE, at))
            self._rearm(at + DRAIN_S, "drained")  # the abort lands in _run as an eof
            return True
        chunk = parse_object(event, self._on_replaced)
        queue = self._queue
        queue.put_nowait((CHUNK, chunk, at))
        if queue.qsize() > BACKLOG_MAX and not self.held_back and self._exchange is not None:
            self.held_back = True
            self.hold_backs += 1
            self._exchange.hold_back(True)
        if self._seen_token:
            if self._deadline_reason == self._gap_reason:
                self._deadline = at + self._chunk_timeout_s
            else:  # the first chunk after a reported pause: back on the chunk clock
                self._rearm(at + self._chunk_timeout_s, self._gap_reason)
        elif has_token(chunk):
            # The chunk clock starts at the first token, not the first event: vLLM sends the
            # role chunk before prefill, which may legitimately take seconds.
            self._seen_token = True
            self._rearm(at + self._chunk_timeout_s, self._gap_reason)
        return False
