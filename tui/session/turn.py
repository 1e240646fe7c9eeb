"""One turn: a request handed to the engine, its reply streaming in, its outcome.

The client runs on the app's network loop (network.py) or, headless, on the caller's own loop.
Per delta the network side does a few attribute writes and hands the text to the surface's
`ReplySink` (the app's coalescing writer, `ask`'s stdout): no widget call, no message posted,
no per-token cross-thread call. Whatever shows the figures reads `state` (receipt times the
engine stamped, never render times) as often as it likes; the surface awaits only the end.

A turn is built and filed by its `Chat` (chat.py): the request counted and trimmed before it
leaves, the reply saved as a draft while it streams, the record and the reply kept at the end.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from typing import TYPE_CHECKING, Protocol

from tui.engine.chat.events import (
    Delta,
    Finished,
    FirstAnswerToken,
    FirstByte,
    FirstToken,
    Paused,
    PromptProgress,
    RequestStarted,
    Retrying,
    UsageReported,
)
from tui.engine.text.inert import inert_line
from tui.session.intake import ReplyIntake
from tui.session.run_state import RunState

if TYPE_CHECKING:
    from tui.engine.chat.client import ChatClient
    from tui.engine.chat.request import ChatRequest
    from tui.session.drafts import Draft
    from tui.session.network import NetworkLoop


class ReplySink(Protocol):
    """Where a surface takes the reply as it streams; called on the network side."""

    def text(self, shown: str) -> None:
        """A piece of the answer (inert unless the turn is raw)."""

    def reasoning(self, shown: str) -> None:
        """A piece of the model's thinking."""

    def answer_started(self) -> None:
        """The first answer token came, after any thinking."""

    def ended(self) -> None:
        """The stream is over (the engine's Finished is next)."""

    def progress(self, event: PromptProgress) -> None:
        """The server's progress through the prompt, before the first token."""


class QuietSink:
    """A sink that takes everything and does nothing: subclass what a surface shows."""

    def text(self, shown: str) -> None:
        return None

    def reasoning(self, shown: str) -> None:
        return None

    def answer_started(self) -> None:
        return None

    def ended(self) -> None:
        return None

    def progress(self, event: PromptProgress) -> None:
        return None


class Turn:
    def __init__(
        self,
        client: ChatClient,
        request: ChatRequest,
        sink: ReplySink,
        *,
        network: NetworkLoop | None = None,
        raw: bool = False,
    ) -> None:
        self.client = client
        self.request = request
        self.sink = sink
        self.intake = ReplyIntake(sink.text, sink.reasoning, raw=raw)
        self.network = network
        self.cancel_event = asyncio.Event()  # waited on by the client, on its loop
        self.state = RunState(sent_at=time.perf_counter())
        self._future: concurrent.futures.Future[Finished] | None = None
        self._task: asyncio.Future[Finished] | None = None
        self.chat_id: int | None = None  # the stored chat the reply belongs to
        self.conversation = 0  # ChatState.conversation when it was sent
        self.draft: Draft | None = None  # its reply as saved while it streams
        self.filed = False  # its record (and reply) are in the store

    def start(self) -> None:
        """Send now; `outcome()` awaits the end. On the network loop the request leaves at
        once; headless it leaves when the caller's loop next runs."""
        if self._future is not None or self._task is not None:
            return
        if self.network is not None:
            self._future = self.network.submit(self._consume())
        else:
            self._task = asyncio.ensure_future(self._consume())

    def cancel(self) -> None:
        """Stop the reply the engine's way: it ends with a cancelled record and what arrived."""
        if self.network is not None:
            self.network.call_soon(self.cancel_event.set)
        else:
            self.cancel_event.set()

    async def outcome(self) -> Finished:
        """The engine's Finished (awaited on the caller's loop)."""
        self.start()
        if self._task is not None:
            finished = await self._task
        else:
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
        return finished

    async def stop(self, timeout_s: float) -> Finished | None:
        """Cancel, and wait up to `timeout_s` for the engine's outcome (a cancelled record
        with whatever arrived): what a closing surface still saves. None: no outcome in time."""
        self.cancel()
        if self.state.finished is not None:
            return self.state.finished
        waiting: asyncio.Future[Finished]
        if self._task is not None:
            waiting = self._task
        elif self._future is not None and not self._future.cancelled():
            waiting = asyncio.wrap_future(self._future)
        else:
            return None
        try:
            return await asyncio.wait_for(asyncio.shield(waiting), timeout_s)
        except asyncio.TimeoutError:
            return None

    async def _consume(self) -> Finished:
        state = self.state
        intake = self.intake
        feed = intake.feed
        finished: Finished | None = None
        async for event in self.client.stream(self.request, self.cancel_event):
            kind = type(event)
            if kind is Delta:  # the hot path first
                if event.new_chunk:  # type: ignore[union-attr]
                    state.tokens += 1
                state.last_token_at = event.at
                if event.kind == "content":  # type: ignore[union-attr]
                    feed(event.text)  # type: ignore[union-attr]
                elif event.kind == "reasoning":  # type: ignore[union-attr]
                    state.reasoning.append(event.text)  # type: ignore[union-attr]
                    intake.feed_reasoning(event.text)  # type: ignore[union-attr]
            elif kind is FirstToken:
                state.first_token_at = event.at
            elif kind is FirstByte:
                state.first_byte_at = event.at
            elif kind is FirstAnswerToken:
                state.first_answer_at = event.at
                intake.end_reasoning()
                self.sink.answer_started()
            elif kind is RequestStarted:
                if state.started_at is None:  # TTFT counts from the first attempt, retries in
                    state.started_at = event.at
            elif kind is Retrying:
                state.retries += 1
                state.retry_reason = inert_line(event.reason)  # type: ignore[union-attr]
            elif kind is UsageReported:
                state.usage_prompt_tokens = event.prompt_tokens  # type: ignore[union-attr]
            elif kind is PromptProgress:
                state.prefill = event  # type: ignore[assignment]
                self.sink.progress(event)  # type: ignore[arg-type]
            elif kind is Paused:
                state.paused_since = event.since  # type: ignore[union-attr]
                state.paused_at = event.at
            elif kind is Finished:
                finished = event  # type: ignore[assignment]
                intake.end()
                self.sink.ended()  # the tail is shown now, not after a throttle's pause
        assert finished is not None, "the client always ends with Finished"
        return finished
