"""When each token of a reply is due: absolute deadlines from receipt, never accumulated sleeps.

The first decoded token is due at receipt + TTFT, token i at first + i / rate: sleep overshoot
never accumulates, and a writer sends every token already due in one write. Thinking a model
never shows still takes decode time, so the visible tokens start that much later.
"""

from __future__ import annotations

import asyncio
import time

from tui.demo.latency_model import LatencyModel


async def sleep_until(deadline: float) -> None:
    """Sleep until perf_counter() >= deadline (re-checked: never wakes early)."""
    while (remaining := deadline - time.perf_counter()) > 0:
        await asyncio.sleep(remaining)


class Schedule:
    """Absolute deadlines: visible token i is due at first_due + (hidden + i) / rate, plus any
    pause so far."""

    def __init__(self, first_due: float, model: LatencyModel, hidden: int = 0) -> None:
        self.first_due = first_due
        self.model = model
        self.hidden = hidden
        self.shift = 0.0

    def due(self, index: int) -> float:
        return self.first_due + self.model.token_offset_s(self.hidden + index) + self.shift

    def pause(self, index: int, until: float) -> None:
        """Token `index` (and every later one, at the same rate) waits until `until`."""
        self.shift = max(
            self.shift, until - (self.first_due + self.model.token_offset_s(self.hidden + index))
        )

    def decode_ms(self, first: float, last: float) -> float:
        """Decode time of a reply whose visible tokens went from `first` to `last`: that span
        plus the hidden thinking before it."""
        return (last - first + self.model.token_offset_s(self.hidden)) * 1000
