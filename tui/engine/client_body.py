"""A streamed reply's body read straight off the connection, each SSE event stamped on arrival.

Through httpx, each network packet of a streamed reply (a real server sends one token per
packet) passes six layers of async generators (httpx, its transport, httpcore's pool and
connection) and two h11 parser calls, then a task switch into the attempt. Here the
connection's receive callback gets the bytes (`AsyncioStream.divert_body`), decodes the
chunked coding and splits the events, without a task switch, so the arrival stamp is also the
earliest possible. The client's CPU for a 4,000-token reply at 500 tokens/s: 0.94 -> 0.61 s
(`benchmarks/bench_client_parse.py --rate 500`; waking for each packet and receiving it alone
is ~0.24 s).

Only for the common case: HTTP/1.1, chunked, no content coding, over firsttoken's own
network backend, with nothing of the body read yet. Anything else (a proxy, HTTP/2, gzip)
reads through httpx as before. The end of the message (the last chunk) is left to h11, read
through httpx, so httpcore sees a complete response and keeps the connection, and a body
that breaks off raises exactly what it raises through httpx. A body that breaks the chunked
coding (as h11 would refuse it) or an event-stream limit raises BrokenBody, which says how.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import openai

from tui.engine.asyncio_network import AsyncioStream
from tui.engine.chunked_body import ChunkedBodyError, ChunkedDecoder
from tui.engine.client_sse import EventSplitter, EventStreamError

perf_counter = time.perf_counter

# Takes one event's data and its arrival time; returns True when it was the last one wanted.
EventTaker = Callable[[bytes, float], bool]


class BrokenBody(openai.APIConnectionError):
    """The body broke the chunked coding or a limit of the event stream; the message says how,
    in one line. A connection error, as h11's refusal of a broken body surfaces through httpx:
    the reply ends early and the connection is not kept."""

    def __init__(self, error: ChunkedBodyError | EventStreamError, request: Any) -> None:
        super().__init__(message=str(error), request=request)


def divertible_stream(http: Any) -> AsyncioStream | None:
    """The connection of httpx response `http`, when its body can be read off it directly."""
    stream = http.extensions.get("network_stream")
    if not isinstance(stream, AsyncioStream) or not stream.at_body_start:
        return None
    headers = http.headers
    if http.http_version != "HTTP/1.1" or headers.get("transfer-encoding", "") != "chunked":
        return None
    if headers.get("content-encoding", "identity") != "identity":
        return None
    return stream


async def read_events(stream: AsyncioStream, request: Any, take: EventTaker) -> bool:
    """Every event of the body to `take` until it returns True (then True) or the body's data
    ends (then False). Raises what `take` raises; a broken chunked coding or an event over a
    limit as BrokenBody (after the events before the break). The last chunk is left to be read."""
    ended: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()
    decode = ChunkedDecoder().feed
    split = EventSplitter().feed
    taken_all = False

    def end(error: BaseException | None) -> None:
        if not ended.done():
            ended.set_result(error)

    def receive(data: bytes) -> bytes | None:
        # Runs in the connection's data callback: it must not raise.
        at = perf_counter()
        try:
            try:
                pieces, rest = decode(data)
            except ChunkedBodyError as error:
                take_all(error.pieces, at)  # what came before the break, as h11 gives it
                raise
            take_all(pieces, at)
        except Exception as error:  # raised to the reader below
            end(error)
            return b""  # the diversion ends; the connection will not be kept
        if rest is not None:
            end(None)
        return rest

    def take_all(pieces: list[bytes], at: float) -> None:
        nonlocal taken_all
        if taken_all or not pieces:
            return
        broken = None
        try:
            events = split(pieces[0] if len(pieces) == 1 else b"".join(pieces))
        except EventStreamError as error:
            events, broken = error.events, error
        for event in events:
            if take(event, at):
                taken_all = True
                return
        if broken is not None:
            raise broken

    undo = stream.divert_body(receive, lambda: end(None))
    try:
        error = await ended
    finally:
        undo()
    if isinstance(error, (ChunkedBodyError, EventStreamError)):
        raise BrokenBody(error, request) from error
    if error is not None:
        raise error
    return taken_all
