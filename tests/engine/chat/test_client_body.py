"""A streamed body read straight off the connection (engine/chat/stream_body.py), over real
HTTP on loopback: the same events as h11 reads from the same bytes, chunk framing cut
anywhere, the connection kept, a broken coding or a cut body ended early, a gzip body decoded."""

from __future__ import annotations

import gzip
import json
import socket
from typing import Any

import h11
from helpers.client import DONE, Canned, collect, demo, make_client, make_request, sse

from tui.engine.chat.events import Delta, FirstToken
from tui.engine.chat.sse import EventSplitter
from tui.engine.metrics.record import RequestStatus

TOKENS = [sse({"content": word}) for word in ("alpha ", "beta ", "gamma ", "delta")]
BODY = [sse({"role": "assistant", "content": ""}), *TOKENS, sse({}, "stop"), DONE]


def chunked(pieces: list[bytes]) -> bytes:
    return b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in pieces) + b"0\r\n\r\n"


def texts(events: list[Any]) -> list[str]:
    return [e.text for e in events if isinstance(e, Delta)]


def h11_contents(port: int, body: bytes) -> list[str]:
    """The reply's content deltas as h11 reads the same request's response off a plain socket
    (the reference), events split by the splitter the property tests hold to the standard."""
    connection = h11.Connection(h11.CLIENT)
    request = h11.Request(
        method="POST",
        target="/v1/chat/completions",
        headers=[("Host", "127.0.0.1"), ("Content-Length", str(len(body)))],
    )
    data = bytearray()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(connection.send(request) + connection.send(h11.Data(data=body)))
        sock.sendall(connection.send(h11.EndOfMessage()))
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                connection.receive_data(sock.recv(65536))
            elif isinstance(event, h11.Data):
                data += event.data
            elif isinstance(event, h11.EndOfMessage):
                break
    contents = []
    for event in EventSplitter().feed(bytes(data)):
        if event != b"[DONE]":
            for choice in json.loads(event).get("choices", []):
                if choice.get("delta", {}).get("content"):
                    contents.append(choice["delta"]["content"])
    return contents


async def test_the_demo_reply_reads_as_h11_reads_it() -> None:
    with demo("instant") as server:
        events, finished = await collect(make_client(server.base_url), make_request())
        body = json.dumps(make_request().body()).encode()
        reference = h11_contents(server.port, body)
    assert texts(events) == reference and len(reference) == 8
    assert finished.record.status is RequestStatus.OK and finished.record.output_tokens == 8


async def test_framing_cut_into_small_packets_and_the_connection_kept() -> None:
    body = chunked(BODY)
    # 1 to 7 bytes a write, each its own packet (a short pause between): every cut of the
    # size lines, data and CRLFs, and the last chunk in pieces too.
    pieces: list[bytes | float] = []
    start, size = 0, 1
    while start < len(body):
        pieces += [body[start : start + size], 0.0005]
        start, size = start + size, size % 7 + 1
    async with Canned(pieces, framed=False) as server:
        client = make_client(server.base_url)
        ends = []
        try:
            for _ in range(2):
                events = [event async for event in client.stream(make_request())]
                ends.append((texts(events), events[-1].record.status))
        finally:
            await client.aclose()
        assert server.requests == 2 and server.connections == 1
    words = ["alpha ", "beta ", "gamma ", "delta"]
    assert ends == [(words, RequestStatus.OK)] * 2


async def test_tokens_are_stamped_as_their_packets_arrive() -> None:
    pieces: list[bytes | float] = [BODY[0], 0.05, TOKENS[0], 0.1, *TOKENS[1:], *BODY[-2:]]
    async with Canned(pieces) as server:
        events, finished = await collect(make_client(server.base_url), make_request())
        role_sent, first_token_sent, next_sent = server.written_at[:3]
    first_token = next(e.at for e in events if isinstance(e, FirstToken))
    # Against the server's own clock (same process, same loop): the first token is stamped
    # after it was written and before the server's pause ended and the next one went out.
    assert role_sent < first_token_sent <= first_token < next_sent
    assert finished.record.status is RequestStatus.OK


async def test_a_broken_chunk_coding_ends_the_reply_early_and_drops_the_connection() -> None:
    body = chunked(BODY[:3])[: -len(b"0\r\n\r\n")] + b"not-a-size\r\n" + chunked(BODY[3:])
    async with Canned([body], framed=False) as server:
        client = make_client(server.base_url)
        try:
            first = [event async for event in client.stream(make_request())]
            second = [event async for event in client.stream(make_request())]
        finally:
            await client.aclose()
        assert server.connections == 2  # the broken connection was not kept
    assert texts(first) == ["alpha ", "beta "]
    assert first[-1].record.status is RequestStatus.ENDED_EARLY
    assert first[-1].record.error_kind == "ended_early"
    assert texts(second) == texts(first)


async def test_a_body_cut_off_mid_stream_is_ended_early() -> None:
    with demo("instant") as server:
        client = make_client(f"{server.root_url}/fault/early/v1")
        events, finished = await collect(client, make_request("reply 20 tokens"))
    assert finished.record.status is RequestStatus.ENDED_EARLY
    assert len(texts(events)) == 5 and finished.text == "".join(texts(events))


async def test_a_gzip_body_is_decoded_though_identity_was_asked_for() -> None:
    body = chunked([gzip.compress(b"".join(BODY))])
    async with Canned([body], framed=False, headers=("Content-Encoding: gzip",)) as server:
        events, finished = await collect(make_client(server.base_url), make_request())
    assert texts(events) == ["alpha ", "beta ", "gamma ", "delta"]
    assert finished.record.status is RequestStatus.OK
