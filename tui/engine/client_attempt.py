"""One HTTP attempt, run as its own task, stamping every chunk the moment it arrives.

Why a separate task: the consumer (the app, `ask`) may be slow between events; timestamps taken
here do not depend on it. The attempt is the only place that awaits the SDK, so a watchdog can
end it at any moment with `Task.cancel()` (a deadline, a stall, the user's cancel) and the SDK's
own `finally` closes the HTTP response: no leaked connections.

A single lazy timer keeps the per-chunk cost at one float store: the chunk deadline moves with
every token, and the timer only re-arms itself when it fires early.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

# Queue items, each a tuple starting with one of these tags.
STARTED = 0  # (STARTED, at)              the request is handed to the SDK
OPENED = 1  # (OPENED, at)                response headers arrived (streaming only)
CHUNK = 2  # (CHUNK, chunk, at)           one parsed SSE event, or the whole non-stream body
END = 3  # (END, outcome, error, at)      outcome: eof | error | timeout | stalled | cancelled

perf_counter = time.perf_counter


def has_token(chunk: Any) -> bool:
    """Whether a streamed chunk carries content, reasoning or a tool-call delta (DESIGN: TTFT)."""
    choices = chunk.choices
    if not choices:
        return False
    delta = choices[0].delta
    if delta is None:
        return False
    if delta.content or delta.tool_calls:
        return True
    extra = delta.model_extra
    return bool(extra and (extra.get("reasoning_content") or extra.get("reasoning")))


class Attempt:
    """Runs `open_request()` and reads its chunks into `queue` until an END item."""

    def __init__(
        self,
        open_request: Callable[[], Any],
        *,
        streaming: bool,
        timeout_s: float,
        chunk_timeout_s: float,
        queue: asyncio.Queue[tuple[Any, ...]],
    ) -> None:
        self._open_request = open_request
        self._streaming = streaming
        self._timeout_s = timeout_s
        self._chunk_timeout_s = chunk_timeout_s
        self._queue = queue
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = 0.0
        self._deadline_reason = "timeout"
        self.abort_reason: str | None = None
        self._ended = False

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())
        self._task.add_done_callback(self._on_done)

    def _on_done(self, _task: asyncio.Task[None]) -> None:
        # A task cancelled before its first step never runs _run: report the END here.
        if not self._ended:
            self._end(self.abort_reason or "cancelled", None)

    def _end(self, outcome: str, error: BaseException | None) -> None:
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
        if not task.done():
            self.abort("cancelled")
        # asyncio.wait never raises the task's outcome (reported through the queue) and lets a
        # cancellation of the caller propagate.
        await asyncio.wait((task,))

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
        remaining = self._deadline - perf_counter()
        if remaining > 0.0005:  # the deadline moved while we slept: sleep again
            loop = asyncio.get_running_loop()
            self._timer = loop.call_at(loop.time() + remaining, self._on_timer)
            return
        self.abort(self._deadline_reason)

    async def _run(self) -> None:
        put = self._queue.put_nowait
        response = None
        started = perf_counter()
        self._rearm(started + self._timeout_s, "timeout")
        put((STARTED, started))
        try:
            response = await self._open_request()
            if not self._streaming:
                put((CHUNK, response, perf_counter()))
                self._end("eof", None)
                return
            put((OPENED, perf_counter()))
            read = response.__anext__
            chunk_timeout_s = self._chunk_timeout_s
            seen_token = False
            while True:
                chunk = await read()
                at = perf_counter()
                put((CHUNK, chunk, at))
                if seen_token:
                    self._deadline = at + chunk_timeout_s
                elif has_token(chunk):
                    # The chunk clock starts at the first token, not the first event: vLLM sends
                    # the role chunk before prefill, which may legitimately take seconds.
                    seen_token = True
                    self._rearm(at + chunk_timeout_s, "stalled")
        except StopAsyncIteration:
            self._end("eof", None)
        except asyncio.CancelledError:
            self._end(self.abort_reason or "cancelled", None)
        except Exception as error:  # classified by the client, never shown raw
            self._end("error", error)
        finally:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if response is not None and self._streaming:
                with contextlib.suppress(Exception):  # closing is best effort
                    await response.close()
