"""Helpers (no tests) shared by the client and ask tests: demo endpoints on loopback, a runner."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tui.demo import DemoThread, start_demo_in_thread
from tui.demo.latency_model import latency_model
from tui.engine.chat.client import ChatClient
from tui.engine.chat.events import ClientEvent, Finished
from tui.engine.chat.request import ChatRequest

TEST_KEY = "sk-test-abcdefghijklmnopqrstuvwxyz-9876"


@contextmanager
def demo(preset: str = "instant", **overrides: float) -> Iterator[DemoThread]:
    thread = start_demo_in_thread(latency_model(preset, overrides))
    try:
        yield thread
    finally:
        thread.stop()


def fault_url(server: DemoThread, spec: str) -> str:
    return f"{server.root_url}/fault/{spec}/v1"


def closed_port() -> int:
    """A port nothing listens on (bound then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_client(base_url: str, **changes: object) -> ChatClient:
    options: dict[str, object] = {
        "base_url": base_url,
        "api_key": TEST_KEY,
        "timeout_s": 10.0,
        "chunk_timeout_ms": 2000,
        "max_retries": 2,
    }
    options.update(changes)
    return ChatClient(**options)  # type: ignore[arg-type]


def make_request(text: str = "hello, reply 8 tokens", **changes: object) -> ChatRequest:
    options: dict[str, object] = {
        "messages": [{"role": "user", "content": text}],
        "model": "demo-model",
        "stream": True,
        "temperature": 0.1,
        "max_tokens": 64,
    }
    options.update(changes)
    return ChatRequest(**options)  # type: ignore[arg-type]


async def collect(
    client: ChatClient, request: ChatRequest, cancel: asyncio.Event | None = None
) -> tuple[list[ClientEvent], Finished]:
    events: list[ClientEvent] = []
    try:
        async for event in client.stream(request, cancel):
            events.append(event)
    finally:
        await client.aclose()
    finished = [e for e in events if isinstance(e, Finished)]
    assert len(finished) == 1 and events[-1] is finished[0], "exactly one Finished, last"
    return events, finished[0]


Pause = float  # a piece of a Canned reply: wait this many seconds before the next piece


class Canned:
    """A loopback HTTP/1.1 server answering every request with the same scripted body.

    For what the demo endpoint never sends ([DONE] without a finish reason, an in-stream error
    object, CRLF line ends, reasoning and tool-call deltas, an event split across writes): the
    client still talks real HTTP to it. `pieces` are written one by one (each as one HTTP chunk
    when `chunked`), a float pauses; `written_at[i]` is perf_counter() after piece i was sent.
    With `framed=False` the pieces are the body's bytes as sent, chunk framing included (their
    own last chunk too); `headers` are added to the response head. `received` keeps each
    request as it arrived.
    """

    def __init__(
        self,
        pieces: list[bytes | Pause],
        *,
        chunked: bool = True,
        content_type: str = "text/event-stream",
        framed: bool = True,
        headers: tuple[str, ...] = (),
    ) -> None:
        self.pieces = pieces
        self.chunked = chunked
        self.framed = framed
        self.headers = headers
        self.content_type = content_type
        self.connections = 0
        self.requests = 0
        self.received: list[bytes] = []  # each request as it arrived: head and body
        self.written_at: list[float] = []
        self._server: asyncio.AbstractServer | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    async def __aenter__(self) -> Canned:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self.connections += 1
        try:
            while True:  # keep-alive: one request after another on this connection
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = 0
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                self.received.append(head + await reader.readexactly(length))
                self.requests += 1
                await self._reply(writer)
        finally:
            writer.close()
            self._handlers.discard(task)

    async def _reply(self, writer: asyncio.StreamWriter) -> None:
        framing = (
            "Transfer-Encoding: chunked"
            if self.chunked
            else f"Content-Length: {sum(len(p) for p in self.pieces if isinstance(p, bytes))}"
        )
        head = [f"Content-Type: {self.content_type}", framing, *self.headers]
        writer.write(("HTTP/1.1 200 OK\r\n" + "".join(f"{h}\r\n" for h in head) + "\r\n").encode())
        frame = self.chunked and self.framed
        for piece in self.pieces:
            if isinstance(piece, float):
                await asyncio.sleep(piece)
                continue
            if frame:
                piece = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
            writer.write(piece)
            await writer.drain()
            self.written_at.append(time.perf_counter())
        if frame:
            writer.write(b"0\r\n\r\n")
            await writer.drain()


def sse(delta: dict | None = None, finish: str | None = None, **extra: object) -> bytes:
    """One `data:` event carrying a chat.completion.chunk (choices empty when delta is None)."""
    chunk: dict[str, object] = {"id": "c", "object": "chat.completion.chunk", "model": "m"}
    chunk["choices"] = (
        [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    )
    chunk.update(extra)
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"
