"""Keep Python's full (generation 2) garbage collections out of a streaming reply.

A reply allocates fast (widgets, strips, segments), which makes the collector run a full
collection several times per long reply; each one stops the UI loop for as long as it walks
the whole heap, and one landing near the end of the stream delays the last words.
While a reply streams, young collections run less often and full ones not at all; the
normal thresholds come back when the reply is on screen, so the deferred full collection
runs while the user reads.
"""

from __future__ import annotations

import gc

# Young collections every 10,000 net allocations instead of 700 (most reply objects die
# young, freed by reference counting before a collection would look at them); generation 1
# as usual; generation 2 effectively never.
STREAMING_THRESHOLDS = (10_000, 10, 1_000_000)


class CollectorPause:
    """`pause()` at the start of a reply, `resume()` once it is rendered (idempotent). Several
    replies streaming at once (a race's lanes) share the pause: the normal thresholds come
    back when the last of them resumes."""

    _holders = 0  # replies holding the pause now, across instances
    _saved: tuple[int, int, int] | None = None

    def __init__(self) -> None:
        self._holding = False

    @property
    def paused(self) -> bool:
        return self._holding

    def pause(self) -> None:
        if self._holding:
            return
        self._holding = True
        if CollectorPause._holders == 0:
            CollectorPause._saved = gc.get_threshold()
            gc.set_threshold(*STREAMING_THRESHOLDS)
        CollectorPause._holders += 1

    def resume(self) -> None:
        if not self._holding:
            return
        self._holding = False
        CollectorPause._holders -= 1
        if CollectorPause._holders == 0 and CollectorPause._saved is not None:
            gc.set_threshold(*CollectorPause._saved)
            CollectorPause._saved = None
