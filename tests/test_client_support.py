"""Helpers (no tests) shared by the client and ask tests: demo endpoints on loopback, a runner."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from contextlib import contextmanager

from tui.engine.client import ChatClient, ChatRequest
from tui.engine.demo_server import DemoThread, start_demo_in_thread
from tui.engine.events import ClientEvent, Finished
from tui.engine.latency_model import latency_model

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
