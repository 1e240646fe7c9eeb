"""The client's network backend on plain asyncio (tui/engine/asyncio_network.py), over real
sockets: replies over plain HTTP and over TLS, kept-alive connections (and ones the server
closed meanwhile), and httpcore's errors for timeouts, refused connections and cut bodies."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpcore2
import httpx2
import pytest
from helpers.client import closed_port, collect, demo, make_client, make_request

from tui.engine.asyncio_network import AsyncioBackend, AsyncioStream, http_client_on_asyncio
from tui.engine.events import Delta

TLS = Path(__file__).with_name("tls")  # a throwaway self-signed certificate for localhost


def reply_text(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, Delta) and e.kind == "content")


def backend_of(client: object) -> object:
    return client._sdk._client._transport._pool._network_backend  # type: ignore[attr-defined]


async def test_the_client_streams_through_the_asyncio_backend_and_keeps_its_connection() -> None:
    with demo("instant") as server:
        client = make_client(server.base_url)
        assert isinstance(backend_of(client), AsyncioBackend)
        first_events = [event async for event in client.stream(make_request())]
        second_events = [event async for event in client.stream(make_request())]
        pool = client._sdk._client._transport._pool
        assert len(pool.connections) == 1  # the second request reused the first's connection
        await client.aclose()
    first, second = first_events[-1], second_events[-1]
    assert first.text == reply_text(first_events) and first.text
    assert second.text == reply_text(second_events) == first.text


@contextlib.asynccontextmanager
async def tls_in_front_of(port: int) -> AsyncIterator[int]:
    """A TLS endpoint on loopback that forwards, in plain text, to `port`."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(TLS / "localhost.pem", TLS / "localhost.key")

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def forward(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.gather(pipe(client_r, server_w), pipe(server_r, client_w))

    server = await asyncio.start_server(forward, "127.0.0.1", 0, ssl=context)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


async def test_a_reply_over_tls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(TLS / "localhost.pem"))  # trust the test certificate
    with demo("instant") as server:
        plain_port = int(server.base_url.split(":")[2].split("/")[0])
        async with tls_in_front_of(plain_port) as tls_port:
            client = make_client(f"https://localhost:{tls_port}/v1")
            events, finished = await collect(client, make_request())
            await client.aclose()
    assert finished.record.status.value == "ok", finished.record.error_message
    assert finished.text == reply_text(events) and finished.text


async def test_an_untrusted_certificate_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with demo("instant") as server:
        plain_port = int(server.base_url.split(":")[2].split("/")[0])
        async with tls_in_front_of(plain_port) as tls_port:
            client = make_client(f"https://localhost:{tls_port}/v1", max_retries=0)
            _events, finished = await collect(client, make_request())
            await client.aclose()
    assert finished.record.status.value == "error"
    assert "certificate" in (finished.record.error_message or "").lower()


ONE_RESPONSE = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok"


async def test_a_kept_connection_the_server_closed_is_replaced() -> None:
    # The server answers one request per connection, then closes it while the client keeps
    # it in its pool: the next request must notice (is_readable) and open a new connection.
    connections = 0

    async def answer_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await reader.readuntil(b"\r\n\r\n")
        writer.write(ONE_RESPONSE)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer_once, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with http_client_on_asyncio() as http:
        first = await http.get(f"http://127.0.0.1:{port}/")
        await asyncio.sleep(0.05)  # the close reaches the client
        second = await http.get(f"http://127.0.0.1:{port}/")
    server.close()
    assert (first.text, second.text, connections) == ("ok", "ok", 2)


async def test_timeouts_refusals_and_cut_bodies_are_httpcores_errors() -> None:
    backend = AsyncioBackend()
    with pytest.raises(httpcore2.ConnectError):
        await backend.connect_tcp("127.0.0.1", closed_port(), timeout=2)

    async def silent_then_cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100)
        writer.write(b"partial")
        await writer.drain()
        await asyncio.sleep(0.3)
        writer.close()

    server = await asyncio.start_server(silent_then_cut, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    stream = await backend.connect_tcp("127.0.0.1", port, timeout=2)
    await stream.write(b"hello")
    assert await stream.read(100, timeout=2) == b"partial"
    with pytest.raises(httpcore2.ReadTimeout):
        await stream.read(100, timeout=0.05)  # the server says nothing for a while
    assert await stream.read(100, timeout=2) == b""  # then closes: the end of the stream
    await stream.aclose()
    server.close()

    # Through httpx: a body shorter than its content-length is a read error, not a reply.
    async def short_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(short_body, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with http_client_on_asyncio() as http:
        with pytest.raises(httpx2.RemoteProtocolError):
            await http.get(f"http://127.0.0.1:{port}/")
    server.close()


async def test_a_slow_reader_pauses_the_socket_and_loses_nothing() -> None:
    payload = bytes(range(256)) * (3 * 4096)  # 3 MiB: above the buffer's high-water mark
    done = asyncio.Event()

    async def flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(payload)
        await writer.drain()
        await done.wait()  # the connection stays open: only the reader's pause stops it
        writer.close()

    server = await asyncio.start_server(flood, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=2)
    transport = stream._transport  # type: ignore[attr-defined]
    for _ in range(100):  # let it pile up until the socket is paused
        if not transport.is_reading():
            break
        await asyncio.sleep(0.01)
    assert not transport.is_reading() and not transport.is_closing()
    received = bytearray()
    while len(received) < len(payload):
        received += await stream.read(65536, timeout=2)
    assert transport.is_reading()  # drained: reading again
    done.set()
    assert await stream.read(65536, timeout=2) == b""
    await stream.aclose()
    server.close()
    assert bytes(received) == payload


async def connected_to(handler: Any) -> tuple[asyncio.Server, AsyncioStream]:
    """A loopback server running `handler`, and an AsyncioStream connected to it."""
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=2)
    assert isinstance(stream, AsyncioStream)
    return server, stream


async def test_reads_after_a_request_stop_at_the_end_of_the_response_head() -> None:
    # The parser above must hold no body bytes when a body is diverted (client_body.py).
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    body = b"3\r\nabc\r\n"
    first_read, sent = asyncio.Event(), asyncio.Event()

    async def head_split_then_body(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(head[:-1])  # the head's end spans two packets
        await writer.drain()
        await first_read.wait()  # (each step waits for the other side: no race on timing)
        writer.write(head[-1:] + body)
        await writer.drain()
        sent.set()
        await asyncio.sleep(0.5)
        writer.close()

    server, stream = await connected_to(head_split_then_body)
    await stream.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    first = await stream.read(65536, timeout=2)
    assert first == head[:-1] and not stream.at_body_start
    first_read.set()
    await sent.wait()
    assert await stream.read(65536, timeout=2) == head[-1:]  # the rest waits
    assert stream.at_body_start
    assert await stream.read(65536, timeout=2) == body
    assert not stream.at_body_start
    await stream.aclose()
    server.close()


async def test_a_diverted_body_gets_what_was_waiting_then_each_arrival() -> None:
    arrivals = asyncio.Queue[bytes]()
    go_on = asyncio.Queue[None]()  # the test lets the server write its next piece

    async def three_writes(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for piece in (b"waiting", b"one", b"two|left for reads"):
            writer.write(piece)
            await writer.drain()
            await go_on.get()
        writer.close()

    server, stream = await connected_to(three_writes)
    while not stream._reader.buffer:  # "waiting" is in the stream's buffer, unread
        await asyncio.sleep(0.01)

    def receive(data: bytes) -> bytes | None:
        arrivals.put_nowait(data)
        _, bar, rest = data.partition(b"|")
        return rest if bar else None

    ended = asyncio.Event()
    stream.divert_body(receive, ended.set)
    assert arrivals.get_nowait() == b"waiting"
    go_on.put_nowait(None)
    assert await asyncio.wait_for(arrivals.get(), 2) == b"one"
    go_on.put_nowait(None)
    assert await asyncio.wait_for(arrivals.get(), 2) == b"two|left for reads"
    go_on.put_nowait(None)
    assert await stream.read(65536, timeout=2) == b"left for reads"  # back to ordinary reads
    assert await stream.read(65536, timeout=2) == b""
    assert not ended.is_set()  # the diversion was over before the end
    await stream.aclose()
    server.close()


async def test_a_diverted_body_learns_of_the_connection_ending() -> None:
    async def one_write_then_close(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await asyncio.sleep(0.05)
        writer.write(b"partial")
        await writer.drain()
        writer.close()

    server, stream = await connected_to(one_write_then_close)
    received: list[bytes] = []
    ended = asyncio.Event()
    undo = stream.divert_body(received.append, ended.set)  # None: more to come
    await asyncio.wait_for(ended.wait(), 2)
    assert received == [b"partial"]
    undo()  # after the end: nothing left to undo, and no error
    assert await stream.read(65536, timeout=2) == b""
    await stream.aclose()
    server.close()
