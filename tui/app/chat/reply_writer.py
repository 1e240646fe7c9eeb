"""Coalescing writer from the token stream into one Markdown widget.

The hot path (`feed`) is a deque append and a flag test: no joins, no widget calls, no loop
calls. It is safe to call from the network thread: the only cross-thread call is one wake-up
of the flusher when it sleeps idle (at most once per write, never per token).

The flusher (a task on the UI loop) writes what piled up with `Markdown.append` (incremental:
only the last block is re-parsed), at most once per `interval_s`. The first token after an
idle spell is written at once (leading edge); when the stream ends the rest is written
immediately (trailing edge), then the message gets one full `Markdown.update()` (an
unterminated code fence can otherwise stay blank).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from tui.app.render import paint_now

if TYPE_CHECKING:
    from textual.widgets import Markdown

FLUSH_INTERVAL_S = 0.05  # 20 writes/s at most: each write costs a layout, whatever its size
# Textual's cost per write grows with the reply (layout walks every Markdown block), so a fixed
# pause stops paying off on long replies: pause for a multiple of what the last write cost,
# between the interval above and this cap; short replies keep the interval's pace (see
# docs/performance.md#the-render-path).
ADAPTIVE_FACTOR = 3.0
MAX_INTERVAL_S = 0.25
# The first writes of a reply go out at the frame rate: a reply often opens with Markdown
# syntax alone ("##", "```"), so a first write can show nothing, and throttling the second
# one would hold the first visible word back. Two writes at most cost two layouts; the pause
# above applies from the third on.
EARLY_WRITES = 2
EARLY_INTERVAL_S = 1 / 60
# Replies streaming at once (a race's lanes) each cost a layout of the whole screen per write;
# writes kept to one beat land in the same turn of the loop and share it.
SHARED_BEAT_S = FLUSH_INTERVAL_S


def pause_after_write(writes: int, cost_s: float, interval_s: float) -> float:
    """How long to let tokens pile up after the `writes`-th write, which took `cost_s`."""
    if writes <= EARLY_WRITES:
        return min(interval_s, EARLY_INTERVAL_S)
    return min(MAX_INTERVAL_S, max(interval_s, ADAPTIVE_FACTOR * cost_s))


def on_the_beat(now: float, pause: float, beat: float = SHARED_BEAT_S) -> float:
    """`pause` stretched to end on the next multiple of `beat` of the loop's clock, so that
    writers pausing at once wake together."""
    return math.ceil((now + pause) / beat) * beat - now


_VISIBLE = re.compile(r"\w")  # a letter or digit: the text will show something


class ReplyWriter:
    streaming = 0  # flushers running now, across instances: more than one keep to one beat

    def __init__(
        self, markdown: Markdown | None = None, interval_s: float = FLUSH_INTERVAL_S
    ) -> None:
        # May be set after the request has left (but before `start`): see the app's send path.
        self.markdown = markdown
        self._interval_s = interval_s
        self._pending: deque[str] = deque()
        self._held = ""  # leading markup kept back until a word follows (see _run)
        self._idle = False  # the flusher waits for a wake-up (set only by the flusher)
        self._wake = asyncio.Event()
        self._ended = asyncio.Event()  # the stream is over: skip the throttle, write the tail
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[object] | None = None
        self.writes = 0  # appends that reached the widget: the pause after each follows their count
        # Called once, when the first text arrives: after it is in the widget, or at once if
        # it is markup alone and held back (the first word is then a token away, time enough
        # to paint what waits for it, e.g. Enter's frame).
        self.on_first_text: Callable[[], None] | None = None
        # Called with each write, in the same held frame: what else should change on screen
        # when the write is painted.
        self.with_write: Callable[[], None] | None = None
        self._last_write_at = 0.0
        self._painted_write = 0  # the write paint_now last painted right after

    def start(self, ready: Awaitable[object] | None = None) -> None:
        """Start flushing on the running (UI) loop; `ready` (e.g. the mount) is awaited first."""
        if self._task is None:
            self._loop = asyncio.get_running_loop()
            if ready is not None:
                self._ready = asyncio.ensure_future(ready)
            self._task = asyncio.create_task(self._run(), name="reply-writer")

    def feed(self, text: str) -> None:
        """Per-token hot path; any thread."""
        self._pending.append(text)
        if self._idle:
            self._idle = False
            loop = self._loop
            if loop is not None:
                loop.call_soon_threadsafe(self._wake.set)

    def end(self) -> None:
        """The stream is over (any thread): the tail goes out now, not after the throttle."""
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._end_now)

    def _end_now(self) -> None:
        # Both: the flusher may be in its throttle pause (waits on _ended) or idle (on _wake).
        self._ended.set()
        self._wake.set()

    def _take(self) -> str:
        pending = self._pending
        # Only this side pops, so taking exactly the items present now never loses one that
        # the network thread appends meanwhile.
        held, self._held = self._held, ""
        return held + "".join([pending.popleft() for _ in range(len(pending))])

    async def _run(self) -> None:
        ReplyWriter.streaming += 1
        try:
            await self._flush()
        finally:
            ReplyWriter.streaming -= 1

    async def _flush(self) -> None:
        if self._ready is not None:
            # Shielded: cancelling this task must not cancel the shared mount future.
            await asyncio.shield(self._ready)
        while True:
            if not self._pending:
                if self._ended.is_set():
                    if self._held:
                        await self._write(self._take())
                    if self.writes != self._painted_write:
                        # The stream ended while the last write was under way: its words are
                        # the last words, painted now.
                        self._painted_write = self.writes
                        self.paint_now()
                    return  # everything written: the flusher ends by itself, never cancelled
                self._idle = True  # announce first, then look: no wake-up can be lost
                if not self._pending:
                    await self._wake.wait()
                self._idle = False
                self._wake.clear()
                continue  # look again: the wake-up may be the end of the stream
            chunk = self._take()
            if not self.writes and not self._ended.is_set() and not _VISIBLE.search(chunk):
                # Markup alone ("##", "```") shows nothing: a write (and its frame) would be
                # spent on it. Held for the next token; the end of the stream writes it anyway.
                self._held = chunk
                self._first_text_arrived()
                continue
            pause = self._interval_s
            if chunk:
                started = time.perf_counter()
                await self._write(chunk)
                pause = pause_after_write(self.writes, time.perf_counter() - started, pause)
            # Throttle: whatever arrives during this pause goes out in the next single write;
            # the end of the stream cuts the pause short.
            if not self._ended.is_set():
                if ReplyWriter.streaming > 1:
                    pause = on_the_beat(asyncio.get_running_loop().time(), pause)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._ended.wait(), pause)

    def writing(self, within_s: float) -> bool:
        """Writes are flowing: the last one was less than `within_s` ago, and more follow."""
        return (
            self.writes > 0
            and not self._ended.is_set()
            and time.perf_counter() - self._last_write_at < within_s
        )

    async def _write(self, chunk: str) -> None:
        self.writes += 1
        # Taken before the append: a stream that ends during it has a tail write to come
        # (or the flusher's end), which paints the last words once.
        last = self._ended.is_set()
        self._last_write_at = time.perf_counter()
        # Shielded: cancelling the flusher mid-write must not abandon the widget's append.
        await asyncio.shield(self._append(chunk))
        self._first_text_arrived()
        if self.writes == 1 or last:
            self._painted_write = self.writes
            self.paint_now()  # the first words, the last words

    def _first_text_arrived(self) -> None:
        if self.on_first_text is not None:
            callback, self.on_first_text = self.on_first_text, None
            callback()

    def paint_now(self) -> None:
        """Paint what was just written without waiting for the next frame tick."""
        markdown = self.markdown
        if markdown is not None and getattr(markdown, "is_attached", False):
            paint_now(markdown.app)

    async def _append(self, chunk: str) -> None:
        markdown = self.markdown
        assert markdown is not None
        # Frames are held until the append is done (Textual paints between the steps of an
        # append otherwise, which takes several turns of the loop), so what `with_write`
        # changes is painted in the same frame as the new text.
        attached = getattr(markdown, "is_attached", False)
        with markdown.app.batch_update() if attached else contextlib.nullcontext():
            if self.with_write is not None and not self._ended.is_set():
                # Not with the tail: the final record replaces the live figures right after,
                # and the last words should not wait for a panel that changes again.
                self.with_write()
            await markdown.append(chunk)
        if attached and markdown.is_attached:  # (a new chat may have removed it meanwhile)
            # A frame the screen skipped while held is painted when the screen next goes
            # idle: make that now, not whenever something else wakes the screen up.
            markdown.screen.check_idle()

    async def finish(self, full_text: str | None) -> None:
        """Write the tail now (it reaches the screen first), then render the reply once, fully."""
        self._end_now()
        if self._task is not None:
            # Normally done already (end() made it write the tail). Otherwise it finishes by
            # itself now: it is never cancelled, because a cancellation that lands as the
            # throttle pause ends can be swallowed by asyncio.wait_for on Python 3.11, and a
            # flusher that missed it would wait for a wake-up forever.
            await self._task
            self._task = None
        if self._ready is not None:
            await self._ready  # a very fast reply can end before its widget is mounted
        chunk = self._take()  # with any markup held back
        if chunk:
            await self._write(chunk)
        assert self.markdown is not None
        text = full_text if full_text is not None else self.markdown.source
        if text:
            # Let the frame with the tail reach the screen first; the full re-render that
            # follows changes little on screen and must not delay the last words.
            await self._after_refresh()
            await self.markdown.update(text)

    async def _after_refresh(self, timeout_s: float = 0.1) -> None:
        assert self.markdown is not None
        painted = asyncio.get_running_loop().create_future()

        def done() -> None:
            if not painted.done():
                painted.set_result(None)

        self.markdown.call_after_refresh(done)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(painted, timeout_s)
