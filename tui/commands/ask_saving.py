"""`ask`'s exchange kept in the history as it happens, so a kill loses at most one second.

The prompt is saved, in a chat of its own titled from it, before the request is sent. While the
reply streams, the text so far is saved at most once a second, by a timer and on a worker
thread (the per-delta path only appends to a list), as an *incomplete* record: a process killed
with SIGKILL leaves what was saved up to a second before, and `history` marks it. The final save
(ok, cancelled, stalled, failed; after SIGINT, SIGTERM or SIGHUP too) replaces that record with
the engine's own and adds the reply to the chat.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

from tui.commands._common import warning
from tui.engine.chat.events import Finished
from tui.engine.chat.reasoning import assistant_message
from tui.engine.metrics.draft_record import draft_record
from tui.engine.metrics.record import RequestRecord

if TYPE_CHECKING:
    from tui.engine.chat.request import ChatRequest
    from tui.engine.store.database import Store

SAVE_EVERY_S = 1.0
TITLE_LENGTH = 60


def chat_title(messages: list[dict[str, Any]]) -> str:
    """The latest user message's first line, shortened: what `history --chats` lists."""
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str) and content.strip():
            line = content.strip().splitlines()[0]
            return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"
    return "ask"


class ReplyKeeper:
    """One `ask` exchange in the store: `open_chat` before the request, `add` per delta,
    `run_saver` beside the stream, `finish` with the Finished event."""

    def __init__(self, store: Store | None, interval_s: float = SAVE_EVERY_S) -> None:
        self.store = store
        self.interval_s = interval_s
        self.chat_id: int | None = None
        self._parts: list[str] = []
        self._saved_length: int | None = None  # None: nothing saved yet
        self._draft: RequestRecord | None = None
        self._writing: asyncio.Future[None] | None = None  # a draft save on its worker thread
        self._failed = False
        self._finished = False

    # -- before the request ----------------------------------------------------------------------

    def open_chat(self, messages: list[dict[str, Any]], model: str) -> None:
        """The chat and every message of the prompt, committed before anything is sent."""
        if self.store is None:
            return
        from tui.engine.store.database import StoreError

        try:
            self.chat_id = self.store.new_chat(chat_title(messages), model)
            self.store.sync_messages(self.chat_id, messages)
        except StoreError as problem:
            self._give_up(problem)

    def start(self, request: ChatRequest, endpoint_host: str, simulated: bool) -> None:
        """The incomplete record the periodic saves write until the engine's record arrives."""
        self._draft = draft_record(
            request, endpoint_host, simulated, kept="what had arrived up to a second before is kept"
        )

    # -- while it streams ------------------------------------------------------------------------

    def add(self, text: str) -> None:
        self._parts.append(text)

    async def run_saver(self) -> None:
        """Save the text so far every `interval_s` while it grows; end it with `stop_saver`."""
        while True:
            await asyncio.sleep(self.interval_s)
            await self.save_progress()

    async def stop_saver(self, saver: asyncio.Task[None]) -> None:
        """Stop the periodic saves and wait for one in flight: a draft written after the final
        save would come back as a second, incomplete record."""
        saver.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await saver
        if self._writing is not None:
            with contextlib.suppress(Exception):
                await self._writing

    async def save_progress(self) -> None:
        """One incomplete save of what arrived so far, on a worker thread (not the loop)."""
        if self.store is None or self._draft is None or self._failed:
            return
        text = "".join(self._parts)
        if len(text) == self._saved_length:
            return
        self._writing = asyncio.ensure_future(asyncio.to_thread(self._save_draft, text))
        await asyncio.shield(self._writing)

    def save_progress_now(self) -> None:
        """The same, synchronously: for an exit that cannot wait for the loop."""
        if self.store is not None and self._draft is not None and not self._failed:
            self._save_draft("".join(self._parts))

    def _save_draft(self, text: str) -> None:
        from tui.engine.store.database import StoreError

        assert self.store is not None and self._draft is not None
        if self._finished:  # the final record is in: a late draft must not come back
            return
        draft = self._draft
        draft.total_ms = (time.time() - draft.started_at_epoch) * 1000.0
        try:
            self.store.save_record(draft, text, self.chat_id, incomplete=True)
        except StoreError as problem:
            self._give_up(problem)
            return
        self._saved_length = len(text)

    # -- at the end ------------------------------------------------------------------------------

    def finish(self, finished: Finished) -> None:
        """The engine's record and the whole reply, replacing the incomplete record."""
        self._finished = True
        if self.store is None or self._failed:
            return
        from tui.engine.store.database import StoreError

        draft_id = self._draft.id if self._draft is not None else None
        try:
            self.store.save_record(
                finished.record,
                finished.text,
                self.chat_id,
                replaces=draft_id,
                reasoning_text=finished.reasoning,
            )
            if self.chat_id is not None and finished.text:
                reply = assistant_message(finished.text, finished.reasoning)
                self.store.add_message(self.chat_id, reply)
        except StoreError as problem:
            self._give_up(problem)

    def _give_up(self, problem: Exception) -> None:
        """A store that failed once (a full disk) is not retried on every save."""
        self._failed = True
        with contextlib.suppress(OSError):
            warning(f"not saved: {problem}")
