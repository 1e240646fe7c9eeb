"""Feed a pty's output into a pyte terminal emulator and timestamp when text appears on it.

A watch is a predicate over the emulated screen's lines. It is checked after every chunk the
reader thread delivered; the time it reports is that chunk's *read* time, so the emulator's
own slowness never inflates a measure (it can only delay when we learn about it).
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import pyte
from wcwidth import wcwidth

from benchmarks.render.pty_driver import COLUMNS, ROWS

Predicate = Callable[[list[str]], bool]

_SPACE = re.compile(r"\s+")
# Box-drawing and block characters that frame panes; treated like blanks when matching text.
_FRAME = re.compile(r"[\u2500-\u259f\u2800-\u28ff▕▏│┃]")


def normalize(text: str) -> str:
    return _SPACE.sub(" ", _FRAME.sub(" ", text)).strip()


def has_text(phrase: str) -> Predicate:
    """True when `phrase` is on screen, on one line or wrapped over consecutive lines.

    Wrapping is handled by also matching against each pair of consecutive lines joined with a
    space, both whole and cut into panes at wide blank gaps (a side panel beside the chat would
    otherwise sit between the two halves of a wrapped phrase).
    """
    target = normalize(phrase)

    def check(lines: list[str]) -> bool:
        flat = [normalize(line) for line in lines]
        if any(target in line for line in flat):
            return True
        panes = [re.split(r"\s{3,}", _FRAME.sub(" ", line)) for line in lines]
        for upper, lower in itertools.pairwise(panes):
            for a in upper:
                for b in lower:
                    if target in normalize(f"{a} {b}"):
                        return True
        return False

    return check


@dataclass
class Watch:
    predicate: Predicate
    done: threading.Event = field(default_factory=threading.Event)
    at: float | None = None


def screen_lines(screen: pyte.Screen) -> list[str]:
    """The screen's text, one string per row; like pyte's `display`, but a cell left empty by
    a half-overwritten wide (CJK) character reads as a blank instead of raising IndexError."""
    lines = []
    columns = screen.columns
    for y in range(screen.lines):
        row = screen.buffer[y]
        cells = []
        skip = False
        for x in range(columns):
            if skip:
                skip = False
                continue
            data = row[x].data
            if not data:
                cells.append(" ")
                continue
            skip = wcwidth(data[0]) == 2
            cells.append(data)
        lines.append("".join(cells))
    return lines


class _AnsweringScreen(pyte.Screen):
    """A screen that answers device-attribute and cursor-position queries, as a real
    terminal does; an app that asks and waits would otherwise stall on a timeout."""

    answer: Callable[[str], object] | None = None

    def write_process_input(self, data: str) -> None:
        if self.answer is not None:
            self.answer(data)


class ScreenWatcher:
    """Consumes (time, bytes) chunks into a pyte screen on its own thread."""

    def __init__(
        self,
        chunks: queue.SimpleQueue[tuple[float, bytes] | None],
        rows: int = ROWS,
        cols: int = COLUMNS,
        answer: Callable[[str], object] | None = None,
    ) -> None:
        self.screen = _AnsweringScreen(cols, rows)
        self.screen.answer = answer
        self.stream = pyte.ByteStream(self.screen)
        self._chunks = chunks
        self._lock = threading.Lock()
        self._watches: list[Watch] = []
        self.log: list[tuple[float, int]] = []  # (read time, byte count) of every chunk
        # Screens that differed from the one before, while recording (see final_appearance).
        self.history: deque[tuple[float, tuple[str, ...]]] = deque(maxlen=6000)
        self._recording = False
        self.closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="screen-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._chunks.get()
            if item is None:
                break
            at, data = item
            with self._lock:
                self.log.append((at, len(data)))
                # An escape pyte does not know must not stop the watch.
                with contextlib.suppress(Exception):
                    self.stream.feed(data)
                pending = [w for w in self._watches if not w.done.is_set()]
                if pending or self._recording:
                    lines = screen_lines(self.screen)
                    frozen = tuple(lines)
                    if self._recording and (not self.history or self.history[-1][1] != frozen):
                        self.history.append((at, frozen))
                    for watch in pending:
                        if watch.predicate(lines):
                            watch.at = at
                            watch.done.set()
        self.closed.set()
        with self._lock:
            for watch in self._watches:
                watch.done.set()

    def lines(self) -> list[str]:
        with self._lock:
            return screen_lines(self.screen)

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.lines())

    def watch(self, predicate: Predicate) -> Watch:
        """Start watching now; if the screen already matches, the watch fires at once."""
        w = Watch(predicate)
        with self._lock:
            if predicate(screen_lines(self.screen)):
                w.at = time.perf_counter()
                w.done.set()
            self._watches.append(w)
        return w

    def wait(self, watch: Watch, timeout_s: float) -> float | None:
        """Block until the watch fires; its chunk's read time, or None on timeout/exit."""
        watch.done.wait(timeout_s)
        return watch.at

    def wait_for(self, predicate: Predicate, timeout_s: float) -> float | None:
        return self.wait(self.watch(predicate), timeout_s)

    def start_history(self) -> None:
        with self._lock:
            self.history.clear()
            self.history.append((time.perf_counter(), tuple(screen_lines(self.screen))))
            self._recording = True

    def final_appearance(
        self, phrase: str, last_word: str, not_before: float | None = None
    ) -> tuple[float | None, str]:
        """When the reply's end reached the place it occupies on the settled screen.

        The reply's last words can occur earlier in a long reply (the demo filler cycles), so
        a text search alone could fire on an old copy. Instead: find the lowest row that ends
        with the last word on the settled screen, and walk the recorded screens back to the
        first one of the final, unbroken run in which that row (up to the last word, plus the
        blank cells after it) and the two rows above it already looked exactly like that.

        `not_before` is when the server sent the last token: a run reaching back past it means
        an older copy looked the same (the filler cycles, and a write can end at the same
        place in the cycle), so the answer is then the first screen after it, as a lower bound.
        """
        with self._lock:
            settled = screen_lines(self.screen)
            history = list(self.history)
        match = has_text(phrase)
        row = next(
            (
                r
                for r in range(len(settled) - 1, -1, -1)
                if last_word in settled[r]
                and (match([settled[r]]) or (r > 0 and match([settled[r - 1], settled[r]])))
            ),
            None,
        )
        if row is None:
            return None, "final words not on the settled screen (the view did not follow)"
        end = settled[row].rfind(last_word) + len(last_word)

        def key(lines: tuple[str, ...] | list[str]) -> tuple[str, ...]:
            above = tuple(lines[r][:end] for r in range(max(0, row - 2), row))
            return (*above, lines[row][: end + 3])

        want = key(settled)
        start: float | None = None
        for at, lines in reversed(history):
            if key(lines) != want:
                break
            start = at
        else:
            if history:
                return start, "final run reaches the oldest recorded screen (lower bound)"
        if start is not None and not_before is not None and start < not_before:
            after = [at for at, _lines in history if at >= not_before]
            return (
                (after[0] if after else None),
                "final rows looked the same before the last token (filler repeats): lower bound",
            )
        return start, ""

    def bytes_between(self, start: float, end: float) -> int:
        with self._lock:
            return sum(n for at, n in self.log if start <= at <= end)
