"""A live line on a terminal's stderr while bench, sweep or check wait on a request.

A long prompt can take minutes to reach its first token (`sweep --lengths 200000` on a CPU
server), and the one line per request comes only when a request ends: so on a terminal a line
says which request is under way, how many there are and how long it has waited, rewritten in
place every second. Only on a terminal, never with --json: a log or a script gets the lines
per request alone. The line is rewritten with a carriage return and spaces, no escape
sequence, so nothing a terminal would act on is written; it is cleared before any other line.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from typing import TextIO

TICK_S = 1.0  # how often the waiting time is redrawn: the loop also times the requests


class LiveLine:
    """One line rewritten in place on `stream`; does nothing unless `enabled`."""

    def __init__(self, stream: TextIO, enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self._shown = 0  # characters on the line now

    def show(self, text: str) -> None:
        if not self.enabled:
            return
        columns = shutil.get_terminal_size((80, 24)).columns
        text = text[: max(columns - 1, 10)]  # never wrap: a wrapped line cannot be rewritten
        padding = " " * max(self._shown - len(text), 0)
        self._write(f"\r{text}{padding}\r{text}" if padding else f"\r{text}")
        self._shown = len(text)

    def clear(self) -> None:
        if self.enabled and self._shown:
            self._write("\r" + " " * self._shown + "\r")
            self._shown = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except OSError:  # the terminal went away: the measurements go on
            self.enabled = False


def _waited(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"


class RequestProgress:
    """Which request of how many is under way, and for how long (a LiveLine, ticking)."""

    def __init__(self, line: LiveLine, total: int) -> None:
        self.line = line
        self.total = total
        self.started = 0  # requests started so far
        self._label = ""
        self._since = 0.0
        self._waiting = False  # a request is under way (its line is to be drawn)
        self._ticker: asyncio.Task[None] | None = None

    def start(self, label: str) -> None:
        """A request is about to go (on the event loop)."""
        self.started += 1
        self._label = label
        self._since = time.monotonic()
        self._waiting = True
        self._draw()
        if self.line.enabled and self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick())

    def _draw(self) -> None:
        if not self._waiting:
            return
        waited = _waited(time.monotonic() - self._since)
        count = f"request {self.started} of {self.total}"
        self.line.show(f"  {self._label}: {count}, {waited} so far (Ctrl+C stops)")

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            self._draw()

    def clear(self) -> None:
        """A request ended: its line goes (before another line is written)."""
        self._waiting = False
        self.line.clear()

    async def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
            self._ticker = None
        self.clear()
