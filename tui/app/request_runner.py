"""Drives the engine client for one request and turns its events into cheap state.

It runs as a Textual worker on the app's own event loop (the SDK's I/O is async, so the UI is
never blocked). Per Delta it does three attribute writes and a `ReplyWriter.feed` (a list
append): no widget calls, no messages posted. The side panel reads `state` from a ~10 Hz timer.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui.engine.events import (
    Delta,
    Finished,
    FirstByte,
    FirstToken,
    RequestStarted,
    Retrying,
    UsageReported,
)

if TYPE_CHECKING:
    from tui.app.widgets.reply_writer import ReplyWriter
    from tui.engine.client import ChatClient, ChatRequest


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


class RequestRunner:
    def __init__(self, client: ChatClient, request: ChatRequest, writer: ReplyWriter) -> None:
        self.client = client
        self.request = request
        self.writer = writer
        self.cancel_event = asyncio.Event()
        self.state = RunState(sent_at=time.perf_counter())

    def cancel(self) -> None:
        self.cancel_event.set()

    async def run(self) -> Finished:
        state = self.state
        feed = self.writer.feed
        self.writer.start()
        finished: Finished | None = None
        async for event in self.client.stream(self.request, self.cancel_event):
            kind = type(event)
            if kind is Delta:  # the hot path first
                state.tokens += 1
                state.last_token_at = event.at  # type: ignore[union-attr]
                if event.kind == "content":  # type: ignore[union-attr]
                    feed(event.text)  # type: ignore[union-attr]
            elif kind is FirstToken:
                state.first_token_at = event.at
            elif kind is FirstByte:
                state.first_byte_at = event.at
            elif kind is RequestStarted:
                if state.started_at is None:  # TTFT counts from the first attempt, retries in
                    state.started_at = event.at
            elif kind is Retrying:
                state.retries += 1
                state.retry_reason = event.reason  # type: ignore[union-attr]
            elif kind is UsageReported:
                state.usage_prompt_tokens = event.prompt_tokens  # type: ignore[union-attr]
            elif kind is Finished:
                finished = event  # type: ignore[assignment]
        assert finished is not None, "the client always ends with Finished"
        state.finished = finished
        await self.writer.finish(finished.text)
        return finished
