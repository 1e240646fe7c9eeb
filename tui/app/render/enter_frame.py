"""One frame for Enter and the first words, when the first words come quickly.

Enter changes the screen (the user's message and the reply's block appear, the prompt
clears), and painting that takes a layout and a frame. With a fast endpoint (a local model,
a warm cache) the first token arrives while that frame is being painted, then waits for it,
for its own append and for the next frame, so when the first visible word lands depends on
which side of that frame it falls. Holding screen updates from Enter until the first text is
written, or at most `HOLD_S`, paints both in one frame. When the first token is slower than
that (most remote APIs), Enter's frame is only `HOLD_S` late, well under what a person
notices.

A reply that opens with markup alone ("##", "```") shows nothing until its next token, so
the writer releases the hold as soon as it holds such a token back: Enter's frame is then
painted while the first word is still on its way, and that word's frame carries only it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from textual.app import ScreenStackError, UnknownModeError

if TYPE_CHECKING:
    from textual.app import App

HOLD_S = 0.04


class EnterFrameHold:
    """Screen updates held (Textual's `batch_update`) until `release()` or the deadline."""

    def __init__(self, app: App[Any], hold_s: float = HOLD_S) -> None:
        self._app = app
        self._batch: AbstractContextManager[None] | None = app.batch_update()
        self._batch.__enter__()
        self._timer = app.set_timer(hold_s, self.release, name="enter-frame-hold")
        self._after_frame: list[Callable[[], object]] = []

    @property
    def held(self) -> bool:
        return self._batch is not None

    def after_frame(self, callback: Callable[[], object]) -> None:
        """Run `callback` after the frame that paints the held changes. (Textual's
        `call_after_refresh` would run it at once while updates are held: the screen runs
        its callbacks when it goes idle, and a held screen counts as idle.)"""
        if self._batch is None:
            self._app.call_after_refresh(callback)
        else:
            self._after_frame.append(callback)

    def release(self) -> None:
        """Let the held changes paint (idempotent: the first text, the deadline, or an end)."""
        batch, self._batch = self._batch, None
        if batch is not None:
            self._timer.stop()
            batch.__exit__(None, None, None)
            # Changes made while held are waiting on the screen, which only looks at them
            # when it next goes idle: make sure it does (unless the app is closing).
            with contextlib.suppress(ScreenStackError, UnknownModeError):
                self._app.screen.check_idle()
            for callback in self._after_frame:
                self._app.call_after_refresh(callback)
            self._after_frame.clear()
