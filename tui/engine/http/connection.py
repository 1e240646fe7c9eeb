"""One HTTP/1.1 connection on a plain asyncio Protocol: what it receives goes, inside the loop's
data callback, to whoever reads the response now (the head reader, then the body's receiver),
stamped with `perf_counter()` on arrival. No task switch and no buffer copy per packet: a task
waits on one future per head or body, which the callback resolves when that part has ended.

A connection is kept for the next request only when the response was read to its end, the
server allowed it (HTTP/1.1, no `Connection: close`) and nothing else arrived; a connection the
server closed while it was idle shows as ended (or readable) and is not reused.
"""

from __future__ import annotations

import asyncio
import select
import socket
import time
from typing import Protocol

from tui.engine.http.errors import CLOSED, RESET, ConnectionFailed

perf_counter = time.perf_counter

# Bytes that arrive while nobody reads (between responses) are held up to this, then the socket
# stops reading: a server has no business sending then, and must not fill memory.
MAX_HELD = 1 << 20


class Receiver(Protocol):
    """Takes a response's bytes as they arrive (see module docstring)."""

    def data(self, data: bytes, at: float) -> bytes | None:
        """None while more is wanted; when its part has ended, the bytes that followed it."""

    def end(self, at: float) -> None:
        """The connection ended: finish (a body up to the close) or raise what is missing."""


class Connection(asyncio.Protocol):
    """An HTTP/1.1 client connection; `where` (host:port) names it in errors."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.transport: asyncio.Transport | None = None
        self.received_any = False  # bytes arrived since the last request was written
        self.reusable = False  # set by the exchange once a response was read whole
        self.idle_since = 0.0
        self._receiver: Receiver | None = None
        self._finished: asyncio.Future[None] | None = None
        self._held: list[tuple[bytes, float]] = []
        self._held_size = 0
        self._ended = False
        self._lost: BaseException | None = None
        self._write_paused: asyncio.Future[None] | None = None

    # -- asyncio.Protocol ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        at = perf_counter()
        self.received_any = True
        receiver = self._receiver
        if receiver is not None:
            # Once per network packet while a reply streams: the common case inline.
            try:
                rest = receiver.data(data, at)
            except BaseException as error:  # the receiver refused the bytes: the end of it
                self._fail(error)
                self.abort()
                return
            if rest is not None:
                self._ended_part(rest, at)
            return
        self._held.append((data, at))
        self._held_size += len(data)
        self.reusable = False  # nobody asked for these bytes
        if self._held_size > MAX_HELD and self.transport is not None:
            self.transport.pause_reading()

    def eof_received(self) -> bool:
        self._end(None)
        return False  # close our side too

    def connection_lost(self, error: BaseException | None) -> None:
        self._end(error)
        paused = self._write_paused
        if paused is not None and not paused.done():
            paused.set_result(None)

    def pause_writing(self) -> None:
        if self._write_paused is None or self._write_paused.done():
            self._write_paused = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        paused = self._write_paused
        if paused is not None and not paused.done():
            paused.set_result(None)

    # -- reading -------------------------------------------------------------------------------

    def receive(self, receiver: Receiver) -> asyncio.Future[None]:
        """Hand what arrives (starting with anything held) to `receiver` until its part ends.

        The future completes when it has (the bytes after it are held for the next reader) or
        fails with what the receiver raised or how the connection ended.
        """
        finished = asyncio.get_running_loop().create_future()
        self._receiver, self._finished = receiver, finished
        held, self._held, self._held_size = self._held, [], 0
        for index, (data, at) in enumerate(held):
            self._deliver(data, at)
            if finished.done():
                if self._receiver is None:  # ended normally: keep the rest for the next reader
                    self._held = self._held + held[index + 1 :]
                    self._held_size = sum(len(piece) for piece, _ in self._held)
                break
        if not finished.done() and self._ended:
            self._end_receiver(perf_counter())
        transport = self.transport
        if transport is not None and not transport.is_closing() and not transport.is_reading():
            transport.resume_reading()
        return finished

    def hold_back(self, paused: bool) -> None:
        """Stop (True) or go on (False) reading the socket: a reader that fell behind lets the
        kernel's buffers, and then TCP's window, slow the server down instead of memory."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if paused and transport.is_reading():
            transport.pause_reading()
        elif not paused and not transport.is_reading():
            transport.resume_reading()

    def stop_receiving(self) -> None:
        """The reader gives up (cancelled): nothing more is handed over; the connection is not
        fit to be kept."""
        self._receiver = None
        self.reusable = False

    def _deliver(self, data: bytes, at: float) -> None:
        receiver = self._receiver
        assert receiver is not None
        try:
            rest = receiver.data(data, at)
        except BaseException as error:  # the receiver refused the bytes: the connection is done
            self._fail(error)
            self.abort()
            return
        if rest is not None:
            self._ended_part(rest, at)

    def _ended_part(self, rest: bytes, at: float) -> None:
        """The receiver's part ended; `rest` arrived after it, kept for the next reader."""
        self._receiver = None
        if rest:
            self._held.append((rest, at))
            self._held_size += len(rest)
        finished = self._finished
        if finished is not None and not finished.done():
            finished.set_result(None)

    def _end(self, error: BaseException | None) -> None:
        if self._ended:
            return
        self._ended = True
        self._lost = error
        self.reusable = False
        if self._receiver is not None:
            self._end_receiver(perf_counter())

    def _end_receiver(self, at: float) -> None:
        receiver = self._receiver
        assert receiver is not None
        self._receiver = None
        try:
            receiver.end(at)
        except ConnectionFailed as failure:
            if self._lost is not None and failure.cause == CLOSED:
                failure = ConnectionFailed(RESET, self.where, f"{failure.detail} ({self._lost})")
                failure.__cause__ = self._lost
            self._fail(failure)
            return
        except BaseException as error:
            self._fail(error)
            return
        finished = self._finished
        if finished is not None and not finished.done():
            finished.set_result(None)

    def _fail(self, error: BaseException) -> None:
        self._receiver = None
        self.reusable = False
        finished = self._finished
        if finished is not None and not finished.done():
            finished.set_exception(error)

    # -- writing and state ---------------------------------------------------------------------

    async def write(self, data: bytes) -> None:
        """Hand `data` to the socket; waits only while the socket's send buffer is full."""
        transport = self.transport
        if transport is None or transport.is_closing() or self._ended:
            raise ConnectionFailed(CLOSED, self.where, "the connection closed before the request")
        self.received_any = False
        transport.write(data)
        paused = self._write_paused
        if paused is not None and not paused.done():
            await asyncio.shield(paused)
        if self._ended and self._lost is not None:
            failure = ConnectionFailed(
                RESET, self.where, f"the request was not sent ({self._lost})"
            )
            raise failure from self._lost

    @property
    def usable(self) -> bool:
        """Whether an idle kept connection can carry a request (the server has not closed it or
        sent anything meanwhile)."""
        transport = self.transport
        if not self.reusable or self._ended or self._held or transport is None:
            return False
        if transport.is_closing():
            return False
        return not is_socket_readable(transport.get_extra_info("socket"))

    def abort(self) -> None:
        """Drop the connection now (a response not read to its end cannot be continued)."""
        self.reusable = False
        transport = self.transport
        if transport is not None:
            transport.abort()

    def close(self) -> None:
        self.reusable = False
        transport = self.transport
        if transport is not None:
            transport.close()


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
