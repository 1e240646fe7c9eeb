"""Streamed requests to a llama.cpp server ask for its prompt progress: the progress chunks
come as PromptProgress events before the first token and never stop the TTFT clock; the
record keeps the samples and the server's prefill rate; a server that refuses the field gets
the request again without it, and never again (over real HTTP: the demo playing llama-server,
and a loopback server of raw bytes for the refusal)."""

from __future__ import annotations

import json

import pytest
from helpers.client import collect, demo, make_client, make_request
from helpers.raw_server import RawServer, response

from tui.engine.chat.dialects import NO_PROGRESS, DialectMemory
from tui.engine.chat.events import FirstToken, PromptProgress
from tui.engine.metrics.record import RequestStatus

PROMPT = "word " * 1500 + "reply 8 tokens"


async def test_progress_arrives_before_the_first_token_and_ttft_waits_for_the_token() -> None:
    with demo(server="llamacpp", prefill_ms_per_token=0.5) as server:
        client = make_client(server.base_url, prompt_progress=True)
        events, finished = await collect(client, make_request(PROMPT))
        [entry] = server.requests
    progress = [e for e in events if isinstance(e, PromptProgress)]
    first_token = next(e for e in events if isinstance(e, FirstToken))
    assert entry["return_progress"] is True and len(progress) == entry["progress_chunks"] >= 3
    assert all(e.at <= first_token.at for e in progress)
    assert events.index(progress[-1]) < events.index(first_token)
    samples = [e.sample for e in progress]
    assert samples[0].processed == 0 and samples[-1].processed == samples[-1].total
    assert [s.processed for s in samples] == sorted(s.processed for s in samples)
    record = finished.record
    assert record.status is RequestStatus.OK
    assert record.prefill_tokens_per_s == pytest.approx(2000.0, rel=1e-3)  # 0.5 ms a token
    assert record.prompt_progress is not None
    assert record.prompt_progress[-1]["total"] == record.server["prompt_tokens"]
    # TTFT is the first token's, after the last progress chunk.
    last_ms = record.prompt_progress[-1]["at_ms"]
    assert record.ttft_ms is not None and record.ttft_ms >= last_ms - 0.001  # at_ms is rounded


async def test_without_the_switch_nothing_is_asked_and_nothing_comes() -> None:
    with demo(server="llamacpp") as server:
        events, finished = await collect(make_client(server.base_url), make_request(PROMPT))
        [entry] = server.requests
    assert entry["return_progress"] is False
    assert not any(isinstance(e, PromptProgress) for e in events)
    assert finished.record.prompt_progress is None


def stream_reply() -> bytes:
    chunk = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": "ok"}}],
    }
    done = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in (chunk, done)) + (
        b"data: [DONE]\n\n"
    )


async def test_a_server_that_refuses_the_field_is_asked_again_without_it_and_remembered() -> None:
    def strict(_head: bytes, body: bytes) -> list[bytes]:
        if b"return_progress" in body:
            error = {
                "error": {
                    "message": "Unrecognized request argument supplied: return_progress",
                    "type": "invalid_request_error",
                    "param": None,
                }
            }
            return [
                response(
                    "400 Bad Request", json.dumps(error).encode(), "Content-Type: application/json"
                )
            ]
        return [response("200 OK", stream_reply(), "Content-Type: text/event-stream")]

    memory = DialectMemory()
    async with RawServer(strict) as server:
        client = make_client(server.base_url, prompt_progress=True, dialects=memory)
        _, finished = await collect(client, make_request())
        client = make_client(server.base_url, prompt_progress=True, dialects=memory)
        _, again = await collect(client, make_request())
        bodies = [json.loads(body) for _, body in server.requests]
    assert finished.record.status is RequestStatus.OK and finished.record.adjustments == [
        NO_PROGRESS
    ]
    assert [("return_progress" in b) for b in bodies] == [True, False, False]
    assert again.record.retries == 0


async def test_an_endpoint_whose_reply_carries_llamacpps_timings_is_asked_from_then_on() -> None:
    # Configured as a plain OpenAI-compatible URL: the first reply's `timings` say llama.cpp.
    memory = DialectMemory()
    with demo(server="llamacpp", prefill_ms_per_token=0.5) as server:
        first = await collect(make_client(server.base_url, dialects=memory), make_request(PROMPT))
        later = make_client(server.base_url, dialects=memory)  # a later run, the same memory
        events, finished = await collect(later, make_request(PROMPT))
        asked = [entry["return_progress"] for entry in server.requests]
    assert asked == [False, True]
    assert first[1].record.prompt_progress is None
    assert any(isinstance(e, PromptProgress) for e in events)
    assert finished.record.prompt_progress is not None
    assert finished.record.adjustments == []  # what was learned is no adjustment of the body


async def test_a_server_without_llamacpps_timings_is_never_asked() -> None:
    memory = DialectMemory()
    with demo(server="vllm") as server:
        for _ in range(2):
            await collect(make_client(server.base_url, dialects=memory), make_request())
        asked = [entry["return_progress"] for entry in server.requests]
    assert asked == [False, False]
