"""A streamed reply's events read straight off the connection, each stamped on arrival.

The connection's receive callback (http/connection.py) hands each packet to the body's decoders
(framing, then content coding) and from them to the SSE splitter here, without a task switch, so
the arrival stamp is also the earliest possible. The client's CPU for a 4,000-token reply at 500
tokens/s: docs/performance.md#figures (`benchmarks/bench_client_parse.py --rate 500`).

A body that breaks the chunked coding (as h11 would refuse it) or an event-stream limit raises
BrokenBody, which says how, after the events that came before the break.
"""

from __future__ import annotations

from collections.abc import Callable

from tui.engine.chat.sse import EventSplitter, EventStreamError
from tui.engine.http import BodyRefused, Exchange

# Takes one event's data and its arrival time; returns True when it was the last one wanted.
EventTaker = Callable[[bytes, float], bool]

# The body broke the chunked coding, its content coding or a limit of the event stream; the
# message says how in one line. The reply ends early and the connection is not kept.
BrokenBody = BodyRefused


async def read_events(exchange: Exchange, take: EventTaker) -> bool:
    """Every event of the body to `take` until it returns True (then True, once the body has
    ended: read to its end so the connection can be kept) or the body ends (then False).
    Raises what `take` raises; an event over a limit as BrokenBody (after the events before)."""
    split = EventSplitter().feed
    taken_all = False
    where = exchange.where

    def sink(data: bytes, at: float) -> bool:
        nonlocal taken_all
        broken = None
        try:
            events = split(data)
        except EventStreamError as error:  # what came before the break still counts
            events, broken = error.events, error
        for event in events:
            if take(event, at):
                taken_all = True
                return True
        if broken is not None:
            raise BrokenBody(where, str(broken)) from broken
        return False

    await exchange.receive(sink)
    return taken_all
