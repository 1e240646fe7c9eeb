"""firsttoken's HTTP client (tui/engine/http/) over real sockets on loopback: replies over plain
HTTP and TLS, kept-alive connections (and ones the server closed meanwhile), a head split into
single bytes, the request as it goes on the wire, and the errors with their causes."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import ssl
import struct
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from helpers.client import closed_port, collect, demo, make_client, make_request
from helpers.tls import CERTIFICATE, tls_in_front_of

from tui.engine.chat.events import Delta, RequestStarted
from tui.engine.http import ConnectionFailed, HttpClient, Request, parse_url
from tui.engine.http.connection import Connection
from tui.engine.http.errors import CLOSED, DNS, PROTOCOL, REFUSED, RESET, TLS

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def reply_text(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, Delta) and e.kind == "content")


@contextlib.asynccontextmanager
async def serving(handler: Handler) -> AsyncIterator[int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


async def get(http: HttpClient, url: str, stamps: list | None = None) -> tuple[int, bytes, bool]:
    """(status, body, reused) of one GET."""
    exchange = await http.open(Request("GET", parse_url(url)), stamps if stamps is not None else [])
    try:
        body, _ = await exchange.read()
    finally:
        exchange.close()
    return exchange.status, body, exchange.reused


async def test_a_reply_over_tls_with_its_handshake_stamped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(CERTIFICATE))  # trust the test certificate
    with demo("instant") as server:
        async with tls_in_front_of(server.port) as tls_port:
            client = make_client(f"https://localhost:{tls_port}/v1")
            events, finished = await collect(client, make_request())
    record = finished.record
    assert record.status.value == "ok", record.error_message
    assert finished.text == reply_text(events) and finished.text
    assert record.phases_ms is not None
    assert list(record.phases_ms)[:3] == ["dns", "connect", "tls"]  # "localhost" is a name
    assert record.connection_reused is False


async def test_the_trust_store_is_loaded_before_the_clock_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Loading the system's certificates takes tens of milliseconds: the first https request
    # must not count it inside its tls phase.
    monkeypatch.setenv("SSL_CERT_FILE", str(CERTIFICATE))
    loaded: list[float] = []
    with demo("instant") as server:
        async with tls_in_front_of(server.port) as tls_port:
            client = make_client(f"https://localhost:{tls_port}/v1")
            make_context = client._http._make_context

            def recording_context() -> ssl.SSLContext:
                loaded.append(time.perf_counter())
                return make_context()

            client._http._make_context = recording_context
            events, finished = await collect(client, make_request())
    started = next(e.at for e in events if isinstance(e, RequestStarted))
    assert finished.record.status.value == "ok"
    assert len(loaded) == 1 and loaded[0] < started


async def test_an_untrusted_certificate_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with demo("instant") as server:
        async with tls_in_front_of(server.port) as tls_port:
            client = make_client(f"https://localhost:{tls_port}/v1", max_retries=0)
            _events, finished = await collect(client, make_request())
    assert finished.record.status.value == "error"
    assert "certificate" in (finished.record.error_message or "").lower()


async def test_tls_to_a_plain_port_fails_in_the_handshake() -> None:
    with demo("instant") as server:
        http = HttpClient()
        with pytest.raises(ConnectionFailed) as failed:
            await get(http, f"https://127.0.0.1:{server.port}/v1/models")
        await http.aclose()
    assert failed.value.cause == TLS


ONE_RESPONSE = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"


async def test_a_kept_connection_is_reused_and_one_the_server_closed_is_replaced() -> None:
    connections = 0
    close_after_first = asyncio.Event()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                await reader.readuntil(b"\r\n\r\n")
                writer.write(ONE_RESPONSE)
                await writer.drain()
                if close_after_first.is_set():
                    break
        writer.close()

    async with serving(answer) as port:
        http = HttpClient()
        url = f"http://127.0.0.1:{port}/"
        first = await get(http, url)
        second = await get(http, url)  # kept: the same connection
        close_after_first.set()
        third = await get(http, url)  # the server closes after answering this one
        await asyncio.sleep(0.05)  # the close reaches the client
        fourth = await get(http, url)
        await http.aclose()
    assert [first, second, third, fourth] == [
        (200, b"ok", False),
        (200, b"ok", True),
        (200, b"ok", True),
        (200, b"ok", False),
    ]
    assert connections == 2


async def test_a_kept_connection_closed_as_the_request_goes_out_is_replaced_once() -> None:
    # The server takes the next request and closes without a word (an idle timeout racing the
    # request): the client opens a new connection and sends it again there, marked stale.
    requests = 0

    async def answer_then_drop_the_next(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        nonlocal requests
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            await reader.readuntil(b"\r\n\r\n")
            requests += 1
            writer.write(ONE_RESPONSE)
            await writer.drain()
            await reader.readuntil(b"\r\n\r\n")  # taken, never answered
        writer.close()

    async with serving(answer_then_drop_the_next) as port:
        http = HttpClient()
        url = f"http://127.0.0.1:{port}/"
        await get(http, url)
        stamps: list[tuple[str, float]] = []
        status, body, reused = await get(http, url, stamps)
        await http.aclose()
    assert (status, body, reused) == (200, b"ok", False)
    assert [name for name, _ in stamps] == [
        "stale_connection", "connect", "request_sent", "response_head",
    ]  # fmt: skip
    assert requests == 2


async def test_a_head_arriving_byte_by_byte_then_a_chunked_body() -> None:
    response = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n"
        b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
    )

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        for index in range(len(response)):
            writer.write(response[index : index + 1])
            await writer.drain()
            await asyncio.sleep(0)
        await reader.read()  # until the client closes
        writer.close()

    async with serving(trickle) as port:
        http = HttpClient()
        exchange = await http.open(Request("GET", parse_url(f"http://127.0.0.1:{port}/")), [])
        body, _ = await exchange.read()
        exchange.close()
        await http.aclose()
    assert exchange.head.headers.get("x-a") == "1"
    assert body == b"abcde"


async def test_the_request_as_it_goes_on_the_wire() -> None:
    seen: list[bytes] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        seen.append(head + await reader.readexactly(length))
        writer.write(ONE_RESPONSE)
        await writer.drain()
        writer.close()

    async with serving(record) as port:
        http = HttpClient()
        target = parse_url(f"http://127.0.0.1:{port}/v1/chat/completions?api-version=1")
        request = Request("POST", target, (("Accept", "text/event-stream"),), b'{"a":1}')
        exchange = await http.open(request, [])
        await exchange.read()
        exchange.close()
        await http.aclose()
    assert seen == [
        b"POST /v1/chat/completions?api-version=1 HTTP/1.1\r\n"
        + f"Host: 127.0.0.1:{port}\r\n".encode()
        + b"Accept: text/event-stream\r\nContent-Length: 7\r\n\r\n"
        + b'{"a":1}'
    ]


@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw-deflate"])
async def test_a_compressed_body_is_decoded(coding: str) -> None:
    payload = b"the same words " * 500
    if coding == "gzip":
        body = gzip.compress(payload)
    elif coding == "deflate":
        body = zlib.compress(payload)
    else:  # deflate without the zlib header, as some servers send it
        compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        body = compressor.compress(payload) + compressor.flush()
    name = "deflate" if "deflate" in coding else coding
    response = (
        f"HTTP/1.1 200 OK\r\nContent-Encoding: {name}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(response)
        await writer.drain()
        writer.close()

    async with serving(answer) as port:
        http = HttpClient()
        status, data, _ = await get(http, f"http://127.0.0.1:{port}/")
        await http.aclose()
    assert (status, data) == (200, payload)


async def test_errors_carry_their_cause() -> None:
    http = HttpClient()
    with pytest.raises(ConnectionFailed) as refused:
        await get(http, f"http://127.0.0.1:{closed_port()}/")
    assert refused.value.cause == REFUSED
    assert isinstance(refused.value.__cause__, ConnectionRefusedError)

    with pytest.raises(ConnectionFailed) as unknown:
        await get(http, "http://no-such-host.invalid/")
    assert unknown.value.cause == DNS

    async def short_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc")
        await writer.drain()
        writer.close()

    async with serving(short_body) as port:
        with pytest.raises(ConnectionFailed) as cut:
            await get(http, f"http://127.0.0.1:{port}/")
    assert cut.value.cause == CLOSED

    async def not_http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
        await writer.drain()
        writer.close()

    async with serving(not_http) as port:
        with pytest.raises(ConnectionFailed) as bad:
            await get(http, f"http://127.0.0.1:{port}/")
    assert bad.value.cause == PROTOCOL and "status line" in bad.value.detail

    async def silent_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    async with serving(silent_close) as port:
        with pytest.raises(ConnectionFailed) as dropped:
            await get(http, f"http://127.0.0.1:{port}/")
    assert dropped.value.cause == CLOSED and "without an answer" in dropped.value.detail
    await http.aclose()


async def test_a_connection_reset_mid_body_says_reset() -> None:
    async def reset_mid_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial")
        await writer.drain()
        await asyncio.sleep(0.05)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()  # with a zero linger: an RST, not a FIN

    http = HttpClient()
    async with serving(reset_mid_body) as port:
        with pytest.raises(ConnectionFailed) as reset:
            await get(http, f"http://127.0.0.1:{port}/")
    await http.aclose()
    assert reset.value.cause == RESET
    assert isinstance(reset.value.__cause__, ConnectionResetError)


async def test_bytes_nobody_asked_for_keep_the_connection_from_reuse() -> None:
    connections = 0

    async def answer_with_extra(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                await reader.readuntil(b"\r\n\r\n")
                writer.write(ONE_RESPONSE + b"garbage after the response")
                await writer.drain()
        writer.close()

    async with serving(answer_with_extra) as port:
        http = HttpClient()
        url = f"http://127.0.0.1:{port}/"
        results = [await get(http, url), await get(http, url)]
        await http.aclose()
    assert results == [(200, b"ok", False), (200, b"ok", False)]
    assert connections == 2


class Recorder:
    """A receiver that keeps what it gets; `until` ends its part at that byte string."""

    def __init__(self, until: bytes | None = None) -> None:
        self.pieces: list[bytes] = []
        self.until = until
        self.ended = False

    def data(self, data: bytes, at: float) -> bytes | None:
        if self.until is not None and self.until in data:
            head, _, rest = data.partition(self.until)
            self.pieces.append(head)
            return rest
        self.pieces.append(data)
        return None

    def end(self, at: float) -> None:
        self.ended = True


async def connected_to(handler: Handler) -> tuple[asyncio.Server, Connection]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    loop = asyncio.get_running_loop()
    _, connection = await loop.create_connection(lambda: Connection("test"), "127.0.0.1", port)
    return server, connection


async def test_a_receiver_gets_what_was_held_then_each_arrival_and_the_rest_is_kept() -> None:
    go_on = asyncio.Queue[None]()

    async def three_writes(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for piece in (b"waiting", b"one", b"two|left for the next reader"):
            writer.write(piece)
            await writer.drain()
            await go_on.get()
        writer.close()

    server, connection = await connected_to(three_writes)
    while not connection._held:  # "waiting" arrived with nobody reading
        await asyncio.sleep(0.01)
    recorder = Recorder(until=b"|")
    finished = connection.receive(recorder)
    assert recorder.pieces == [b"waiting"]
    go_on.put_nowait(None)
    while len(recorder.pieces) < 2:  # each write is let out once the one before has arrived
        await asyncio.sleep(0.01)
    go_on.put_nowait(None)
    await asyncio.wait_for(finished, 2)
    assert recorder.pieces == [b"waiting", b"one", b"two"]
    rest = Recorder()
    connection.receive(rest)  # the next reader starts with what followed
    assert rest.pieces == [b"left for the next reader"]
    go_on.put_nowait(None)
    await asyncio.sleep(0.05)  # the server's handler ends on its own
    connection.close()
    server.close()


async def test_a_receiver_learns_of_the_connection_ending() -> None:
    async def one_write_then_close(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await asyncio.sleep(0.05)
        writer.write(b"partial")
        await writer.drain()
        writer.close()

    server, connection = await connected_to(one_write_then_close)
    recorder = Recorder()
    await asyncio.wait_for(connection.receive(recorder), 2)  # end() returned: a finished part
    assert recorder.pieces == [b"partial"] and recorder.ended
    assert not connection.usable
    connection.close()
    server.close()
