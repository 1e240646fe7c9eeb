"""A malformed or hostile streamed body ends the reply with a one-line error saying what was
wrong: never a hang, never a buffer that grows with what the server sends.

Unit level: the decoder and the splitter refuse at their limits, holding no more than the limit
(their `held`, not the process's RSS). Through real HTTP: a small asyncio server on loopback
sends a good start and then the hostile bytes, for as long as the client reads them, to
firsttoken's ChatClient; the reply ends early with the error, the partial reply is kept, the
decoder and splitter the client used never held more than their limits, and a fresh client's
next request works.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any

import pytest
from helpers.raw_server import RawServer

from tui.engine.chat import stream_body as client_body
from tui.engine.chat.client import ChatClient
from tui.engine.chat.events import Delta, Finished, FirstByte, FirstToken
from tui.engine.chat.request import ChatRequest
from tui.engine.chat.sse import (
    MAX_EVENT_DATA,
    MAX_EVENT_LINES,
    MAX_LINE,
    EventSplitter,
    EventStreamError,
)
from tui.engine.http import body as http_body
from tui.engine.http.chunked import MAX_SIZE_LINE, ChunkedBodyError, ChunkedDecoder
from tui.engine.metrics.record import RequestStatus

MiB = 1 << 20


def sse(content: str | None = None, finish: str | None = None) -> bytes:
    delta = {} if content is None else {"content": content}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    event = {"object": "chat.completion.chunk", "choices": [choice]}
    return b"data: " + json.dumps(event).encode() + b"\n\n"


GOOD_START = sse("Hello") + sse(" there")
GOOD_REPLY = GOOD_START + sse(None, "stop") + b"data: [DONE]\n\n"


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def forever(piece: bytes) -> Iterator[bytes]:
    while True:
        yield piece


# -- unit level --------------------------------------------------------------------------------


def test_a_size_line_that_never_ends_is_refused_past_the_limit_holding_at_most_it() -> None:
    decoder = ChunkedDecoder()
    with pytest.raises(ChunkedBodyError, match="size line longer than 4096 bytes"):
        for piece in forever(b"1" * 100):
            decoder.feed(piece)
            assert decoder.held <= MAX_SIZE_LINE


def test_a_chunk_size_of_two_to_the_sixty_is_refused_at_once() -> None:
    with pytest.raises(ChunkedBodyError, match="0x1000000000000000 bytes, over the 1 GiB limit"):
        ChunkedDecoder().feed(chunk(b"data: {}\n\n") + f"{1 << 60:x}\r\n".encode())


def test_an_sse_line_that_never_ends_is_refused_past_the_limit_holding_at_most_it() -> None:
    splitter = EventSplitter()
    fed = 0
    with pytest.raises(EventStreamError, match="an SSE line longer than 4 MiB"):
        for piece in chain([b"data: "], forever(b"x" * 65536)):
            splitter.feed(piece)
            fed += len(piece)
            assert splitter.held[0] <= MAX_LINE
    assert fed <= MAX_LINE  # refused at the first piece past the limit


def test_a_long_line_in_one_piece_is_refused_too() -> None:
    with pytest.raises(EventStreamError, match="an SSE line longer than 4 MiB") as raised:
        EventSplitter().feed(b"data: a\n\n: " + b"x" * MAX_LINE + b"\n\n")
    assert raised.value.events == [b"a"]  # what came before the break


def test_an_event_of_a_million_data_lines_is_refused_at_the_line_limit() -> None:
    splitter = EventSplitter()
    lines = 0
    with pytest.raises(EventStreamError, match="more than 10,000 data lines"):
        for piece in forever(b"data: {}\n" * 1000):
            splitter.feed(piece)
            lines += 1000
            assert splitter.held[1] <= MAX_EVENT_LINES
    assert lines <= MAX_EVENT_LINES


def test_an_event_over_the_data_limit_is_refused() -> None:
    splitter = EventSplitter()
    with pytest.raises(EventStreamError, match="more than 4 MiB of data"):
        for piece in forever(b"data: " + b"x" * 60_000 + b"\n"):
            splitter.feed(piece)
            assert splitter.held[0] <= MAX_EVENT_DATA


def test_the_limits_are_per_line_and_per_event_not_per_stream() -> None:
    splitter = EventSplitter()
    event = b"data: " + b"x" * (MiB - 7) + b"\n\n"
    taken = sum(len(splitter.feed(event)) for _ in range(8))  # 8 MiB in all
    assert taken == 8 and splitter.held == (0, 0)
    lines = b"data: x\n" * (MAX_EVENT_LINES - 1) + b"data: x\n\n"
    assert splitter.feed(lines * 3) == [b"\n".join([b"x"] * MAX_EVENT_LINES)] * 3


# -- through real HTTP -------------------------------------------------------------------------

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"


class OneBadReply(RawServer):
    """An HTTP/1.1 server on loopback: the first request gets `body` (pieces written as fast as
    the client reads them, until it stops reading or MAX_SENT), every later one a good reply."""

    MAX_SENT = 64 * MiB  # a client that never refused would end the test, not hang it

    def __init__(self, body: Iterator[bytes], headers: bytes = b"") -> None:
        super().__init__(lambda _head, _body: ())
        self._body = body
        self._headers = headers
        self.sent = 0
        self.request_count = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")
                )
                await reader.readexactly(length)
                self.request_count += 1
                if self.request_count == 1:
                    await self._send_bad(writer)
                    return
                writer.write(HEAD + b"\r\n" + chunk(GOOD_REPLY) + b"0\r\n\r\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client hung up: what it does on a refused body
        finally:
            writer.close()

    async def _send_bad(self, writer: asyncio.StreamWriter) -> None:
        writer.write(HEAD + self._headers + b"\r\n")
        for piece in self._body:
            writer.write(piece)
            self.sent += len(piece)
            await writer.drain()  # waits while the client is not reading: nothing piles up here
            if self.sent > self.MAX_SENT:
                return


def request() -> ChatRequest:
    return ChatRequest(
        [{"role": "user", "content": "hi"}], "m", stream=True, temperature=0.1, max_tokens=64
    )


def client_for(url: str) -> ChatClient:
    return ChatClient(base_url=url, api_key="sk-test", timeout_s=20, chunk_timeout_ms=20_000)


async def reply(url: str) -> tuple[str, Finished]:
    client = client_for(url)
    try:
        events = [event async for event in client.stream(request())]
    finally:
        await client.aclose()
    finished = events[-1]
    assert isinstance(finished, Finished)
    text = "".join(e.text for e in events if isinstance(e, Delta))
    return text, finished


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """The decoders and splitters the client makes, each noting the most it held after a feed
    (bytes; and for a splitter, data lines)."""
    made: dict[str, list[Any]] = {"decoders": [], "splitters": []}

    def watch(cls: type, kind: str, held: Callable[[Any], tuple[int, int]]) -> type:
        class Watched(cls):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self.most_bytes = self.most_lines = 0
                made[kind].append(self)

            def feed(self, data: bytes) -> Any:
                try:
                    return super().feed(data)
                finally:
                    held_bytes, held_lines = held(self)
                    self.most_bytes = max(self.most_bytes, held_bytes)
                    self.most_lines = max(self.most_lines, held_lines)

        return Watched

    decoder = watch(ChunkedDecoder, "decoders", lambda d: (d.held, 0))
    splitter = watch(EventSplitter, "splitters", lambda s: s.held)
    monkeypatch.setattr(http_body, "ChunkedDecoder", decoder)
    monkeypatch.setattr(client_body, "EventSplitter", splitter)
    return made


HOSTILE = {
    "a size line that never ends": (
        lambda: chain([chunk(GOOD_START)], forever(b"1" * 1024)),
        "a chunk size line longer than 4096 bytes",
    ),
    "a chunk size of 2^60": (
        lambda: chain([chunk(GOOD_START), f"{1 << 60:x}\r\n".encode()], forever(sse("x"))),
        "a chunk size of 0x1000000000000000 bytes, over the 1 GiB limit",
    ),
    "an SSE line that never ends": (
        lambda: chain([chunk(GOOD_START), chunk(b"data: ")], forever(chunk(b"x" * 65536))),
        "an SSE line longer than 4 MiB",
    ),
    "an event of a million data lines": (
        lambda: chain([chunk(GOOD_START)], (chunk(b"data: {}\n" * 10_000) for _ in range(100))),
        "an SSE event with more than 10,000 data lines",
    ),
    "an event over 4 MiB of data": (
        lambda: chain([chunk(GOOD_START)], forever(chunk(b"data: " + b"x" * 65536 + b"\n"))),
        "an SSE event with more than 4 MiB of data",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
async def test_a_hostile_body_ends_the_reply_with_what_was_wrong(
    case: str, watched: dict[str, list[Any]]
) -> None:
    body, reason = HOSTILE[case]
    async with OneBadReply(body()) as server:
        text, finished = await reply(server.base_url)
        record = finished.record
        assert record.status is RequestStatus.ENDED_EARLY and record.error_kind == "ended_early"
        assert record.error_message == (
            f"the stream broke off on a bad body from the server ({reason}): "
            "the reply may be cut off"
        )
        assert text == "Hello there"  # what came before the break is kept
        # Bounded: the client's decoder and splitter never held more than their limits, and
        # the server could only push what the client read (plus socket buffers) before it quit.
        [decoder], [splitter] = watched["decoders"], watched["splitters"]
        assert decoder.most_bytes <= MAX_SIZE_LINE
        assert splitter.most_bytes <= MAX_LINE + MAX_EVENT_DATA
        assert splitter.most_lines <= MAX_EVENT_LINES
        assert server.sent < OneBadReply.MAX_SENT

        text, finished = await reply(server.base_url)  # a fresh client, the same server
        assert (text, finished.record.status) == ("Hello there", RequestStatus.OK)
        assert server.request_count == 2


async def test_a_gzip_body_keeps_the_same_limits(watched: dict[str, list[Any]]) -> None:
    stream = GOOD_START + b"data: " + b"x" * (MAX_LINE + MiB)
    body = [chunk(gzip.compress(stream)), b"0\r\n\r\n"]
    async with OneBadReply(iter(body), b"Content-Encoding: gzip\r\n") as server:
        text, finished = await reply(server.base_url)
    assert finished.record.status is RequestStatus.ENDED_EARLY
    assert finished.record.error_message is not None
    assert "(an SSE line longer than 4 MiB)" in finished.record.error_message
    assert text == "Hello there"
    assert watched["splitters"][0].most_bytes <= MAX_LINE


async def test_an_error_line_from_llama_cpp_ends_the_reply_with_its_message() -> None:
    body = GOOD_START + b'error: {"code":500,"message":"slot unavailable"}\n\ndata: [DONE]\n\n'
    async with OneBadReply(iter([chunk(body), b"0\r\n\r\n"])) as server:
        text, finished = await reply(server.base_url)
    assert finished.record.status is RequestStatus.ERROR
    assert finished.record.error_message == (
        "the server reported an error mid-stream: slot unavailable"
    )
    assert text == "Hello there"


async def test_empty_data_events_are_keep_alives_not_broken_chunks() -> None:
    body = b"data:\n\n" + GOOD_START + b"data: \n\n" + sse(None, "stop") + b"data: [DONE]\n\n"
    async with OneBadReply(iter([chunk(body), b"0\r\n\r\n"])) as server:
        text, finished = await reply(server.base_url)
    assert (text, finished.record.status) == ("Hello there", RequestStatus.OK)


async def test_a_keep_alive_is_an_event_for_ttfb_but_no_token() -> None:
    body = b"data:\n\ndata: [DONE]\n\n"
    async with OneBadReply(iter([chunk(body), b"0\r\n\r\n"])) as server:
        client = client_for(server.base_url)
        try:
            events = [event async for event in client.stream(request())]
        finally:
            await client.aclose()
    kinds = {type(event) for event in events}
    assert FirstByte in kinds and FirstToken not in kinds and Delta not in kinds
    finished = events[-1]
    assert isinstance(finished, Finished) and finished.record.ttfb_ms is not None
    assert finished.record.ttft_ms is None
