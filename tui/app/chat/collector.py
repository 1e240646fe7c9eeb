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
    """`pause()` at the start of a reply, `resume()` once it is rendered (idempotent)."""

    def __init__(self) -> None:
        self._saved: tuple[int, int, int] | None = None

    @property
    def paused(self) -> bool:
        return self._saved is not None

    def pause(self) -> None:
        if self._saved is None:
            self._saved = gc.get_threshold()
            gc.set_threshold(*STREAMING_THRESHOLDS)

    def resume(self) -> None:
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None
