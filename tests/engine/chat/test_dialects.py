"""A model that refuses `max_tokens` or a non-default temperature, as OpenAI's reasoning models
answer: the client sends again once with the body the model takes, counts the resend in TTFT,
shows the adjustment in the record, and remembers it (in a file) for the next request."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from helpers.client import DONE, collect, make_client, make_request, sse

from tui.engine.chat.dialects import (
    DEFAULT_TEMPERATURE,
    MAX_COMPLETION_TOKENS,
    DialectMemory,
    adjusted_body,
    adjustment_asked,
)

# OpenAI's own words (as many clients logged them).
MAX_TOKENS_REFUSED = {
    "error": {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead.",
        "type": "invalid_request_error",
        "param": "max_tokens",
        "code": "unsupported_parameter",
    }
}
TEMPERATURE_REFUSED = {
    "error": {
        "message": "Unsupported value: 'temperature' does not support 0.1 with this model. "
        "Only the default (1) value is supported.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "unsupported_value",
    }
}


class ReasoningModelServer:
    """Answers like OpenAI's reasoning models: 400 for max_tokens (or, with `stubborn`, for
    anything), 400 for a temperature other than 1, else a short streamed reply."""

    def __init__(self, stubborn: bool = False) -> None:
        self.stubborn = stubborn
        self.bodies: list[dict] = []
        self._server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/v1"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                body = json.loads(await reader.readexactly(length))
                self.bodies.append(body)
                refusal = None
                if "max_tokens" in body or self.stubborn:
                    refusal = MAX_TOKENS_REFUSED
                elif body.get("temperature", 1) != 1:
                    refusal = TEMPERATURE_REFUSED
                if refusal is not None:
                    payload = json.dumps(refusal).encode()
                    writer.write(
                        b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
                        + f"Content-Length: {len(payload)}\r\n\r\n".encode()
                        + payload
                    )
                else:
                    events = sse({"content": "thought hard"}, "stop") + DONE
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                        + f"Content-Length: {len(events)}\r\n\r\n".encode()
                        + events
                    )
                await writer.drain()
        writer.close()


@contextlib.asynccontextmanager
async def reasoning_model(stubborn: bool = False) -> AsyncIterator[ReasoningModelServer]:
    server = ReasoningModelServer(stubborn)
    server._server = await asyncio.start_server(server._serve, "127.0.0.1", 0)
    try:
        yield server
    finally:
        server._server.close()


async def test_refused_parameters_are_adjusted_once_each_and_remembered(tmp_path: Path) -> None:
    memory = tmp_path / "state" / "dialects.json"
    async with reasoning_model() as server:
        client = make_client(server.base_url, dialects=DialectMemory(memory), max_retries=0)
        _, finished = await collect(client, make_request(model="o-reasoner"))
        first_bodies = list(server.bodies)
        client = make_client(server.base_url, dialects=DialectMemory(memory), max_retries=0)
        _, again = await collect(client, make_request(model="o-reasoner"))
        later_bodies = server.bodies[len(first_bodies) :]
        base_url = server.base_url
    record = finished.record
    assert record.status.value == "ok" and finished.text == "thought hard"
    assert record.adjustments == [MAX_COMPLETION_TOKENS, DEFAULT_TEMPERATURE]
    assert record.retries == 2
    assert [("max_tokens" in b, "temperature" in b) for b in first_bodies] == [
        (True, True), (False, True), (False, False),
    ]  # fmt: skip
    assert first_bodies[-1]["max_completion_tokens"] == 64
    # The resends' time is inside TTFT, as any retry's.
    assert record.phases_ms is not None and next(iter(record.phases_ms)) == "retries"
    assert sum(record.phases_ms.values()) == pytest.approx(record.ttft_ms)
    # Next time (a new client, as in a later run) the adjusted body goes out first.
    assert len(later_bodies) == 1 and "max_tokens" not in later_bodies[0]
    assert again.record.adjustments == record.adjustments and again.record.retries == 0
    saved = json.loads(memory.read_text())
    assert saved == {f"{base_url} o-reasoner": [MAX_COMPLETION_TOKENS, DEFAULT_TEMPERATURE]}


async def test_a_model_that_keeps_refusing_is_not_asked_forever(tmp_path: Path) -> None:
    async with reasoning_model(stubborn=True) as server:
        client = make_client(server.base_url, dialects=DialectMemory(None), max_retries=2)
        _, finished = await collect(client, make_request(model="o-stubborn"))
    record = finished.record
    assert record.status.value == "error" and record.error_kind == "bad_request"
    assert len(server.bodies) == 2 and record.retries == 1  # one resend, then the error


async def test_other_models_of_the_endpoint_are_sent_as_written(tmp_path: Path) -> None:
    memory = DialectMemory(tmp_path / "dialects.json")
    memory.learn("http://127.0.0.1:1/v1", "o-reasoner", MAX_COMPLETION_TOKENS)
    assert memory.get("http://127.0.0.1:1/v1", "gpt-4o-mini") == ()
    assert DialectMemory(tmp_path / "dialects.json").get("http://127.0.0.1:1/v1", "o-reasoner") == (
        MAX_COMPLETION_TOKENS,
    )


def test_what_a_400_asks_for() -> None:
    assert adjustment_asked(400, MAX_TOKENS_REFUSED, []) == MAX_COMPLETION_TOKENS
    assert adjustment_asked(400, MAX_TOKENS_REFUSED, [MAX_COMPLETION_TOKENS]) is None
    assert adjustment_asked(400, TEMPERATURE_REFUSED, []) == DEFAULT_TEMPERATURE
    assert adjustment_asked(500, MAX_TOKENS_REFUSED, []) is None
    context = {"error": {"message": "maximum context length is 4096 tokens", "param": "messages"}}
    assert adjustment_asked(400, context, []) is None
    assert adjustment_asked(400, "not json", []) is None
    body = {"model": "m", "max_tokens": 9, "temperature": 0.1, "stream": True}
    assert adjusted_body(body, [MAX_COMPLETION_TOKENS, DEFAULT_TEMPERATURE]) == {
        "model": "m",
        "max_completion_tokens": 9,
        "stream": True,
    }
    assert body["max_tokens"] == 9  # the original is left alone


def test_an_unreadable_memory_file_starts_empty(tmp_path: Path) -> None:
    path = tmp_path / "dialects.json"
    path.write_text("{not json")
    memory = DialectMemory(path)
    assert memory.get("e", "m") == ()
    memory.learn("e", "m", DEFAULT_TEMPERATURE)
    assert json.loads(path.read_text()) == {"e m": [DEFAULT_TEMPERATURE]}
