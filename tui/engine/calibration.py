"""How far local prompt-token estimates are from what the server reports.

A local count is approximate for most models (another tokenizer, a chat template the client
cannot see), but the error is steady for one model, so a ratio learnt from `usage.prompt_tokens`
corrects later estimates well. An exponential moving average follows a change of template or
server without being thrown by one odd reply.
"""

from __future__ import annotations

import threading

# Weight of the newest sample; ~5 replies to mostly forget an old server.
ALPHA = 0.3
# A ratio outside this range means a bad sample (an image, a cached prompt), not a tokenizer.
MIN_RATIO = 0.2
MAX_RATIO = 5.0


class Calibration:
    """Running actual/estimated ratio for one model. Thread-safe; in memory only."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ratio = 1.0
        self._samples = 0

    @property
    def ratio(self) -> float:
        return self._ratio

    @property
    def samples(self) -> int:
        return self._samples

    def record(self, estimated: int, actual: int) -> None:
        """Learn from one reply; non-positive or absurd pairs are ignored."""
        if estimated <= 0 or actual <= 0:
            return
        sample = actual / estimated
        if not MIN_RATIO <= sample <= MAX_RATIO:
            return
        with self._lock:
            if self._samples == 0:
                self._ratio = sample
            else:
                self._ratio = ALPHA * sample + (1 - ALPHA) * self._ratio
            self._samples += 1

    def apply(self, n: int) -> int:
        """A local estimate corrected by the learnt ratio (unchanged before any sample)."""
        if self._samples == 0:
            return n
        return max(0, round(n * self._ratio))

    def reset(self) -> None:
        with self._lock:
            self._ratio = 1.0
            self._samples = 0
