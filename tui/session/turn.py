"""Drives the engine client for one request and turns its events into cheap state.

The client lives on a private event loop in a daemon thread (`NetworkLoop`), so the request
leaves the moment Enter is handled, whatever the UI is busy mounting or painting, and every
receipt time is stamped by a loop that never waits for a frame. Per Delta the network side
does three attribute writes and a `ReplyWriter.feed` (a deque append): no widget calls, no
messages posted, no per-token cross-thread calls. The side panel reads `state` on a ~10 Hz
timer; the UI awaits only the final `Finished`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from tui.app.untrusted import ReplyIntake
from tui.engine.chat.events import (
    Delta,
    Finished,
    FirstAnswerToken,
    FirstByte,
    FirstToken,
    Paused,
    RequestStarted,
    Retrying,
    UsageReported,
)
from tui.engine.text.inert import inert, inert_line

if TYPE_CHECKING:
    from tui.app.reply_saving import Draft
    from tui.app.widgets.reply_writer import ReplyWriter
    from tui.engine.chat.client import ChatClient
from tui.engine.chat.request import ChatRequest

T = TypeVar("T")


class NetworkLoop:
    """An asyncio loop in a daemon thread, owned by the app, where the engine client runs."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="firsttoken-network", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the network loop and await its result from the calling loop."""
        return await asyncio.wrap_future(self.submit(coro))

    def call_soon(self, callback: Any, *args: Any) -> None:
        self.loop.call_soon_threadsafe(callback, *args)

    def stop(self, timeout: float = 2.0) -> None:
        """Cancel what still runs on the loop (a model list nobody waits for any more), let
        it end, then stop the loop and its thread. Stopped with a task pending, the loop
        would leave it to be destroyed with a warning when the process ends."""
        if self.loop.is_running():
            ended = asyncio.run_coroutine_threadsafe(_cancel_the_others(), self.loop)
            with contextlib.suppress(concurrent.futures.TimeoutError):
                ended.result(timeout)
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)


async def _cancel_the_others() -> None:
    """Cancel every other task of the running loop and wait for them to end."""
    current = asyncio.current_task()
    others = [task for task in asyncio.all_tasks() if task is not current]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


@dataclass(slots=True)
class RunState:
    """Receipt times (perf_counter seconds) the engine stamped; never render times."""

    sent_at: float  # when the app handed the request over (the live counter's zero until
    #                 the engine's own RequestStarted arrives)
    started_at: float | None = None
    first_byte_at: float | None = None
    first_token_at: float | None = None
    last_token_at: float | None = None
    tokens: int = 0
    retries: int = 0
    retry_reason: str | None = None
    usage_prompt_tokens: int | None = None
    finished: Finished | None = None
    # The thinking's deltas as they came (only appended, on the network side): the reply's
    # reasoning block reads them (reasoning_block.py).
    reasoning: list[str] = field(default_factory=list)
    # The answer's first token (after any reasoning), and the last pause the engine saw (it is
    # over once a token arrived after `paused_at`).
    first_answer_at: float | None = None
    paused_since: float | None = None
    paused_at: float | None = None


class RequestRunner:
    def __init__(
        self,
        client: ChatClient,
        request: ChatRequest,
        writer: ReplyWriter,
        network: NetworkLoop | None = None,
    ) -> None:
        self.client = client
        self.request = request
        self.writer = writer
        # The exact text for the history; inert text for the writer (server text is untrusted).
        self.intake = ReplyIntake(writer.feed)
        self.network = network
        self.cancel_event = asyncio.Event()  # waited on by the client, on the network loop
        self.state = RunState(sent_at=time.perf_counter())
        self._future: concurrent.futures.Future[Finished] | None = None
        self.chat_id: int | None = None  # the stored chat the reply belongs to
        self.conversation = 0  # ChatSession.conversation when it was sent
        self.saved = False  # its record (and reply) are in the store
        self.draft: Draft | None = None  # its reply as saved while it streams

    def start(self) -> None:
        """Send now (on the network loop); `run()` later awaits the outcome."""
        if self.network is not None and self._future is None:
            self._future = self.network.submit(self._consume())

    def cancel(self) -> None:
        if self.network is not None:
            self.network.call_soon(self.cancel_event.set)
        else:
            self.cancel_event.set()

    async def stop(self, timeout_s: float) -> Finished | None:
        """Cancel, and wait up to `timeout_s` for the engine's outcome (a cancelled record
        with whatever arrived): what a closing app still saves. None: no outcome in time."""
        self.cancel()
        if self.state.finished is not None:
            return self.state.finished
        if self._future is None or self._future.cancelled():
            return None
        try:
            return await asyncio.wait_for(asyncio.wrap_future(self._future), timeout_s)
        except asyncio.TimeoutError:
            return None

    async def _consume(self) -> Finished:
        state = self.state
        feed = self.intake.feed
        finished: Finished | None = None
        async for event in self.client.stream(self.request, self.cancel_event):
            kind = type(event)
            if kind is Delta:  # the hot path first
                state.tokens += 1
                state.last_token_at = event.at
                if event.kind == "content":  # type: ignore[union-attr]
                    feed(event.text)  # type: ignore[union-attr]
                elif event.kind == "reasoning":  # type: ignore[union-attr]
                    state.reasoning.append(event.text)  # type: ignore[union-attr]
                    self.intake.feed_reasoning(event.text)  # type: ignore[union-attr]
            elif kind is FirstToken:
                state.first_token_at = event.at
            elif kind is FirstByte:
                state.first_byte_at = event.at
            elif kind is FirstAnswerToken:
                state.first_answer_at = event.at
            elif kind is RequestStarted:
                if state.started_at is None:  # TTFT counts from the first attempt, retries in
                    state.started_at = event.at
            elif kind is Retrying:
                state.retries += 1
                state.retry_reason = inert_line(event.reason)  # type: ignore[union-attr]
            elif kind is UsageReported:
                state.usage_prompt_tokens = event.prompt_tokens  # type: ignore[union-attr]
            elif kind is Paused:
                state.paused_since = event.since  # type: ignore[union-attr]
                state.paused_at = event.at
            elif kind is Finished:
                finished = event  # type: ignore[assignment]
                self.intake.end()
                self.writer.end()  # the tail is written now, not after the throttle pause
        assert finished is not None, "the client always ends with Finished"
        return finished

    async def run(self, ready: Any = None) -> Finished:
        """Await the reply (UI loop): the writer flushes meanwhile; then the final render."""
        self.writer.start(ready)
        if self.network is None:
            finished = await self._consume()
        else:
            self.start()
            assert self._future is not None
            try:
                # Shielded: a cancelled caller (the app closing) must not kill the request
                # on the network loop mid-read, which would leave no outcome and no record.
                # It is cancelled the engine's way instead, which ends with its record.
                finished = await asyncio.shield(asyncio.wrap_future(self._future))
            except asyncio.CancelledError:
                self.cancel()
                raise
        self.state.finished = finished
        await self.writer.finish(inert(finished.text))
        return finished
