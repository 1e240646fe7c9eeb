"""A reply that is still streaming, kept in the history as it grows (the app's and `ask`'s).

Each reply under way has a draft: an *incomplete* record holding the exact text that has
arrived so far. A saver thread writes every draft that grew every SAVE_EVERY_S, so SQLite is
never on the per-token path nor on the UI's or the stream's loop; a process killed with SIGKILL
leaves what was saved up to SAVE_EVERY_S before, marked incomplete, and the next start shows it
(see ChatHistory.chat). The reply's final save (ok, cancelled, stalled, failed, or cut short by
quitting) replaces the draft with the engine's record, under the same lock, so a late draft
can never come back after it. `save_soon()` (a signal handler's) has the thread save at once.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui.engine.chat.draft_record import draft_record as engine_draft_record
from tui.engine.metrics.record import RequestRecord

if TYPE_CHECKING:
    from collections.abc import Callable

    from tui.engine.chat.request import ChatRequest
    from tui.engine.store.database import Store
    from tui.session.intake import ReplyIntake
    from tui.session.run_state import RunState

# Under the one second promised, so a loaded machine that wakes the thread late still keeps
# what was on screen a second before a kill.
SAVE_EVERY_S = 0.5


@dataclass(eq=False)
class Draft:
    """One reply under way: where it is filed, its incomplete record, its text so far."""

    chat_id: int | None
    record: RequestRecord
    intake: ReplyIntake
    state: RunState  # the engine's receipt times, for the draft's TTFT and total
    saved_length: int = -1  # what the last save held (-1: nothing saved yet)
    done: bool = False  # the final record is in: no more drafts

    def reasoning(self) -> str:
        return self.intake.reasoning()


def draft_record(request: ChatRequest, host: str, simulated: bool) -> RequestRecord:
    """The record a draft is saved as until the engine's own replaces it."""
    return engine_draft_record(request, host, simulated, kept="what had arrived is kept")


class ReplyDrafts:
    """The drafts of the replies under way and the thread that saves them."""

    def __init__(
        self, store: Store, warn: Callable[[str], None], interval_s: float = SAVE_EVERY_S
    ) -> None:
        self.store = store
        self.interval_s = interval_s
        self._warn = warn
        self._drafts: list[Draft] = []
        self._lock = threading.Lock()  # drafts and their saves; taken before the store's
        self._wake = threading.Event()
        self._closed = False
        self._failed = False  # one warning, not one a second
        self._thread: threading.Thread | None = None

    def begin(self, draft: Draft) -> Draft:
        with self._lock:
            self._drafts.append(draft)
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(
                    target=self._run, name="firsttoken-reply-saver", daemon=True
                )
                self._thread.start()
        return draft

    def finish(self, draft: Draft | None, final: Callable[[], None]) -> None:
        """Run `final` (the reply's last save) with no draft save before or after it racing it."""
        with self._lock:
            if draft is not None:
                draft.done = True
                if draft in self._drafts:
                    self._drafts.remove(draft)
            final()

    def save_due(self) -> None:
        """Save every draft that grew since its last save (the thread's step)."""
        with self._lock:
            for draft in self._drafts:
                self._save(draft)

    def save_soon(self) -> None:
        """Have the thread save now (safe in a signal handler: sets an event, nothing else)."""
        self._wake.set()

    def close(self) -> None:
        """The app is closing: save what is left now and stop the thread."""
        self.save_due()
        with self._lock:
            self._closed = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join(timeout=2.0)

    def _run(self) -> None:
        while True:
            self._wake.wait(self.interval_s)
            self._wake.clear()
            if self._closed:
                return
            self.save_due()

    def _save(self, draft: Draft) -> None:
        from tui.engine.store.database import StoreError

        if draft.done or self._failed:
            return
        text = draft.intake.text()
        if len(text) == draft.saved_length:
            return
        record, state = draft.record, draft.state
        # From the engine's own request start (docs/metrics.md#definitions), else from Enter.
        started = state.started_at if state.started_at is not None else state.sent_at
        record.total_ms = (time.perf_counter() - started) * 1000.0
        if state.first_token_at is not None:
            record.ttft_ms = (state.first_token_at - started) * 1000.0
        try:
            self.store.save_record(
                record,
                text,
                draft.chat_id,
                incomplete=True,
                reasoning_text=draft.reasoning(),
            )
        except StoreError as problem:
            self._failed = True
            self._warn(f"history not saved: {problem}")
            return
        draft.saved_length = len(text)
