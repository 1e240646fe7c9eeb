"""Helpers (no tests) for the demo endpoint's own tests: a server per dialect, raw HTTP to it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2

from tui.demo import DemoServer
from tui.demo.latency_model import latency_model


@asynccontextmanager
async def running(preset: str = "instant", **overrides: Any) -> AsyncIterator[DemoServer]:
    """A demo endpoint on the test's own loop, e.g. running(server="llamacpp")."""
    demo = DemoServer(latency_model(preset, overrides))
    await demo.start()
    try:
        yield demo
    finally:
        await demo.stop()


async def post(url: str, body: Any) -> tuple[int, Any]:
    """(status, parsed JSON answer) of one POST; the answer is the raw text when not JSON."""
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(url, json=body)
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, response.text


async def stream_chunks(url: str, body: dict) -> list[Any]:
    """The `data:` payloads of one streamed chat reply, parsed; the last one is "[DONE]"."""
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        http.stream("POST", f"{url}/chat/completions", json={**body, "stream": True}) as response,
    ):
        assert response.status_code == 200
        text = (await response.aread()).decode("utf-8")
    events = [e.removeprefix("data: ") for e in text.split("\n\n")[:-1]]
    return [e if e == "[DONE]" else json.loads(e) for e in events]


def deltas(chunks: list[Any], field: str) -> list[str]:
    """The `field` text of each delta that carries a non-empty one, in order."""
    out = []
    for chunk in chunks:
        if isinstance(chunk, dict) and chunk.get("choices"):
            value = chunk["choices"][0]["delta"].get(field)
            if value:
                out.append(value)
    return out
