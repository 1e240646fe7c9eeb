"""A loopback HTTP/1.1 server that answers every request with bytes the test chose: a whole
response (head and body) written as given, then the connection closed. For what a hostile or
broken server sends that the demo endpoint never would (bytes on a socket, not mocks)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

# Takes the request's head and body; returns the response's bytes, in the pieces to write.
Answer = Callable[[bytes, bytes], Iterable[bytes]]


class RawServer:
    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self.requests: list[tuple[bytes, bytes]] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.lower().split(b"\r\n"):
                if line.startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = await reader.readexactly(length)
            self.requests.append((head, body))
            for piece in self._answer(head, body):
                writer.write(piece)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


def response(status: str, body: bytes, *headers: str, length: bool = True) -> bytes:
    """A response's bytes: `status` like "500 Internal Server Error", the headers given, and
    Content-Length for `body` unless `length` is False (then the body runs to the close)."""
    lines = [f"HTTP/1.1 {status}", *headers, "Connection: close"]
    if length:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@contextmanager
def raw_server_in_thread(answer: Answer) -> Iterator[RawServer]:
    """A RawServer on an event loop of its own in a daemon thread: for a subprocess to reach."""
    ready = threading.Event()
    stop: list[Callable[[], None]] = []
    holder: list[RawServer] = []

    async def main() -> None:
        async with RawServer(answer) as server:
            holder.append(server)
            done = asyncio.Event()
            loop = asyncio.get_running_loop()
            stop.append(lambda: loop.call_soon_threadsafe(done.set))
            ready.set()
            await done.wait()

    thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield holder[0]
    finally:
        stop[0]()
        thread.join(10)
