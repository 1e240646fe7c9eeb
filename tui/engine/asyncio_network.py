"""The HTTP client's network I/O straight on asyncio, instead of through anyio.

httpcore (under httpx, under the openai SDK) reads a response through its network backend,
one read per network packet: a streamed reply from a real server arrives one token per
packet. Its default backend goes through anyio, which costs each read a cancel scope (even
with no timeout) and a checkpoint (an extra turn of the event loop). This backend reads from
an asyncio protocol's buffer: a read finds its bytes already there, or waits on one future.
Measured on a 4,000-token reply at 500 tokens/s (`python benchmarks/bench_client_parse.py
--rate 500`): see the README's benchmark table.

Same contract as httpcore's own backends: timeouts raise its Connect/Read/WriteTimeout,
socket errors its Connect/Read/WriteError, a read at the end of the stream returns b"".
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
from collections.abc import Callable, Iterable
from typing import Any

import httpcore2  # openai 3.x -> httpx2 -> httpcore2: installed with openai, never on its own
from httpcore2 import AsyncNetworkBackend, AsyncNetworkStream

_EOF = b""  # what a read returns at the end of the stream
_HEAD_END = b"\r\n\r\n"

# A diverted body's receiver: gets each piece as it arrives; returns None while the body goes
# on, or the bytes to hand back to ordinary reads (the end of the message) when it is done.
BodyReceiver = Callable[[bytes], "bytes | None"]

# A reader that falls behind stops the socket at this much buffered, resumes below the low mark.
HIGH_WATER = 1 << 20
LOW_WATER = 1 << 16


class _Reader(asyncio.Protocol):
    """Buffers what arrives; one waiter at a time (httpcore never reads concurrently)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.write_paused: asyncio.Future[None] | None = None
        self.receiver: BodyReceiver | None = None  # set while a body is diverted
        self.on_receiver_end: Callable[[], None] | None = None  # the stream ended meanwhile

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        receiver = self.receiver
        if receiver is not None:
            rest = receiver(data)  # never raises (BodyReceiver's contract)
            if rest is None:
                return
            self.receiver = self.on_receiver_end = None
            data = rest
        self.buffer += data
        if len(self.buffer) > HIGH_WATER and self.transport is not None:
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close our side too

    def connection_lost(self, error: BaseException | None) -> None:
        self.eof = True
        self.error = error
        self._wake()
        if self.write_paused is not None and not self.write_paused.done():
            self.write_paused.set_result(None)

    def pause_writing(self) -> None:
        if self.write_paused is None or self.write_paused.done():
            self.write_paused = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self.write_paused is not None and not self.write_paused.done():
            self.write_paused.set_result(None)

    def _wake(self) -> None:
        if self.receiver is not None and self.eof:  # the connection ended mid-body: say so once
            on_end = self.on_receiver_end
            self.receiver = self.on_receiver_end = None
            if on_end is not None:
                on_end()
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


async def _within(awaitable: Any, timeout: float | None, timeout_error: type[Exception]) -> Any:
    if timeout is None:
        return await awaitable
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except asyncio.TimeoutError:
        raise timeout_error(f"timed out after {timeout} s") from None


class AsyncioStream(AsyncNetworkStream):
    """Besides httpcore's contract: reads after a request stop at the end of the response head,
    so the parser above holds no body bytes, and `divert_body` can hand the body's bytes to a
    receiver as they arrive (client_body.py reads a streamed reply that way)."""

    def __init__(self, transport: asyncio.Transport, reader: _Reader) -> None:
        self._transport = transport
        self._reader = reader
        self._in_head = False  # a request was written: reads stop at its response head's end
        self._head_tail = b""  # the last bytes read in the head (its end may span two reads)
        self.at_body_start = False  # the last read ended a head: the body is all still here

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        reader = self._reader
        if not reader.buffer and not reader.eof:
            await self._wait_for_data(timeout)
        self.at_body_start = False
        if not reader.buffer:  # the end of the stream
            if reader.error is not None:
                raise httpcore2.ReadError(str(reader.error)) from reader.error
            return _EOF
        buffer = reader.buffer
        if self._in_head:
            max_bytes = self._head_read_size(buffer, max_bytes)
        if len(buffer) <= max_bytes:
            data = bytes(buffer)
            buffer.clear()
        else:
            data = bytes(buffer[:max_bytes])
            del buffer[:max_bytes]
        transport = self._transport
        if len(buffer) < LOW_WATER and not transport.is_reading() and not transport.is_closing():
            transport.resume_reading()
        return data

    def _head_read_size(self, buffer: bytearray, max_bytes: int) -> int:
        """How much of `buffer` to return so the read ends with the head, if it ends here."""
        seen = self._head_tail + bytes(buffer[:max_bytes])
        end = seen.find(_HEAD_END)
        if end < 0:
            self._head_tail = seen[-3:]
            return max_bytes
        self._in_head = False
        self._head_tail = b""
        self.at_body_start = True
        return end + len(_HEAD_END) - (len(seen) - min(len(buffer), max_bytes))

    def divert_body(self, receiver: BodyReceiver, on_end: Callable[[], None]) -> Callable[[], None]:
        """Hand every byte the connection receives to `receiver` as it arrives (within the loop's
        callback, stamped without a task switch), starting with those already here, until the
        receiver returns what is left for ordinary reads. `on_end` runs if the connection ends
        first. Returns a function that ends the diversion early (idempotent)."""
        reader = self._reader
        held, reader.buffer = bytes(reader.buffer), bytearray()
        rest = receiver(held) if held else None
        if rest is not None:
            reader.buffer += rest
        else:
            reader.receiver, reader.on_receiver_end = receiver, on_end
            if reader.eof:
                reader._wake()
        transport = self._transport
        if not transport.is_reading() and not transport.is_closing():
            transport.resume_reading()

        def undo() -> None:
            if reader.receiver is receiver:
                reader.receiver = reader.on_receiver_end = None

        return undo

    async def _wait_for_data(self, timeout: float | None) -> None:
        loop = asyncio.get_running_loop()
        waiter = self._reader.waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
        try:
            await waiter
        except asyncio.TimeoutError:
            raise httpcore2.ReadTimeout(f"no data for {timeout} s") from None
        finally:
            self._reader.waiter = None
            if timer is not None:
                timer.cancel()

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._in_head, self._head_tail = True, b""
        if self._transport.is_closing():
            raise httpcore2.WriteError("the connection is closed")
        try:
            self._transport.write(buffer)
        except (OSError, RuntimeError) as error:
            raise httpcore2.WriteError(str(error)) from error
        paused = self._reader.write_paused
        if paused is not None and not paused.done():
            await _within(asyncio.shield(paused), timeout, httpcore2.WriteTimeout)

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            tls = await _within(
                loop.start_tls(
                    self._transport, self._reader, ssl_context, server_hostname=server_hostname
                ),
                timeout,
                httpcore2.ConnectTimeout,
            )
        except (OSError, ssl.SSLError, ConnectionError) as error:
            self._transport.close()
            raise httpcore2.ConnectError(str(error)) from error
        except BaseException:
            self._transport.close()
            raise
        self._reader.transport = tls
        return AsyncioStream(tls, self._reader)

    def get_extra_info(self, info: str) -> Any:
        transport = self._transport
        if info == "ssl_object":
            return transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        if info == "socket":
            return transport.get_extra_info("socket")
        if info == "is_readable":
            # An idle kept-alive connection is "readable" when the server closed it (or sent
            # something it should not have): httpcore then opens a new one.
            reader = self._reader
            if reader.buffer or reader.eof:
                return True
            return is_socket_readable(transport.get_extra_info("socket"))
        return None


def is_socket_readable(sock: socket.socket | None) -> bool:
    """Whether a read would return at once (data, or the end: a closed socket counts)."""
    if sock is None or sock.fileno() < 0:
        return True
    if not hasattr(select, "poll"):  # Windows
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable)
    poll = select.poll()
    poll.register(sock.fileno(), select.POLLIN)
    return bool(poll.poll(0))


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(asyncio.TimeoutError())


async def _connected(
    connecting: Any, timeout: float | None, socket_options: Iterable[Any] | None
) -> AsyncNetworkStream:
    """The stream once `connecting` (a loop.create_*connection with a _Reader) is done."""
    try:
        transport, reader = await _within(connecting, timeout, httpcore2.ConnectTimeout)
    except OSError as error:
        raise httpcore2.ConnectError(str(error)) from error
    sock: socket.socket = transport.get_extra_info("socket")
    for option in socket_options or ():
        sock.setsockopt(*option)
    return AsyncioStream(transport, reader)


class AsyncioBackend(AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> AsyncNetworkStream:
        local = None if local_address is None else (local_address, 0)
        connecting = asyncio.get_running_loop().create_connection(
            _Reader, host, port, local_addr=local
        )
        return await _connected(connecting, timeout, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> AsyncNetworkStream:
        connecting = asyncio.get_running_loop().create_unix_connection(_Reader, path)
        return await _connected(connecting, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def http_client_on_asyncio() -> Any:
    """The openai SDK's default HTTP client (its limits, redirects), reading through
    AsyncioBackend. Behind a proxy from the environment (HTTP(S)_PROXY, ALL_PROXY) httpx
    routes requests through its own proxy transports, which keep httpcore's backend."""
    import openai

    client = openai.DefaultAsyncHttpxClient()
    # httpx builds the pool itself and takes no backend: set it before the first connection
    # (a newer httpx without these attributes keeps its own backend, which works the same).
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    if isinstance(pool, httpcore2.AsyncConnectionPool) and hasattr(pool, "_network_backend"):
        pool._network_backend = AsyncioBackend()
    return client
