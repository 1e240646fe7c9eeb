"""The server's half of TTFT: what servers report about themselves, read from real replies over
HTTP (the demo endpoint playing each server, a canned server for the rest), and TTFT taken
apart into measured parts that add up to the client's TTFT."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from helpers.client import DONE, Canned, collect, make_client, make_request, sse

from tui.demo import DemoServer
from tui.demo.latency_model import latency_model
from tui.engine.metrics.anatomy import CLIENT, REMAINDER, SERVER, ttft_anatomy
from tui.engine.metrics.record import RequestRecord
from tui.engine.metrics.server_report import KEYS, ServerReport

PROMPT = "cache " * 150 + "reply 6 tokens"
FOLLOW_UP = "and now, reply 4 tokens"


@asynccontextmanager
async def playing(server: str, **overrides: Any) -> AsyncIterator[DemoServer]:
    """The demo endpoint playing `server`, with a prefill cost per token (simulated, and slept,
    so it lies inside the client's TTFT) and its prefix cache on."""
    options: dict[str, Any] = {"server": server, "prefill_ms_per_token": 0.2, "prefix_cache": True}
    options.update(overrides)
    demo = DemoServer(latency_model("instant", options))
    await demo.start()
    try:
        yield demo
    finally:
        await demo.stop()


def _parts_add_up(record: RequestRecord) -> dict[str, float]:
    anatomy = ttft_anatomy(record)
    assert anatomy is not None and record.ttft_ms is not None
    assert math.isclose(sum(p.ms for p in anatomy.parts), record.ttft_ms, abs_tol=1e-6)
    assert anatomy.parts[-1].measured_by == REMAINDER
    return {part.name: part.ms for part in anatomy.parts}


async def _ask(demo: DemoServer, messages: list[dict[str, Any]], stream: bool = True) -> Any:
    request = make_request(stream=stream, messages=messages)
    _, finished = await collect(make_client(demo.base_url), request)
    return finished.record, demo.requests[-1]


async def test_llamacpp_timings_give_the_prefill_the_server_simulated() -> None:
    async with playing("llamacpp") as demo:
        first = [{"role": "user", "content": PROMPT}]
        record, entry = await _ask(demo, first)
        assert record.server is not None
        assert record.server["source"] == ["usage", "timings"]
        assert record.server["prompt_tokens"] == entry["prompt_tokens"]
        assert record.server["cached_tokens"] == entry["cached_prompt_tokens"]
        prefilled = entry["prompt_tokens"] - entry["cached_prompt_tokens"]
        assert record.server["prefilled_tokens"] == prefilled
        assert record.server["prefill_ms"] == pytest.approx(entry["prefill_ms"], abs=1e-3)
        assert entry["prefill_ms"] > 20.0  # 150+ tokens at 0.2 ms: a part worth splitting
        parts = _parts_add_up(record)
        assert parts["prefill"] == pytest.approx(entry["prefill_ms"], abs=1e-3)
        assert parts["network + queue"] > -1.0  # the rest of the measured wait

        # The follow-up shares the first prompt's prefix: the server says how much it reused.
        follow = [*first, {"role": "assistant", "content": "ok"}]
        follow.append({"role": "user", "content": FOLLOW_UP})
        record, entry = await _ask(demo, follow)
        assert entry["cached_prompt_tokens"] > 150
        assert record.server is not None
        assert record.server["cached_tokens"] == entry["cached_prompt_tokens"]
        assert record.server["prefill_ms"] == pytest.approx(entry["prefill_ms"], abs=1e-3)
        assert _parts_add_up(record)["prefill"] == pytest.approx(entry["prefill_ms"], abs=1e-3)


async def test_without_streaming_the_split_includes_the_decode() -> None:
    async with playing("llamacpp", decode_tokens_per_s=400.0) as demo:
        record, entry = await _ask(demo, [{"role": "user", "content": PROMPT}], stream=False)
    parts = _parts_add_up(record)  # TTFT = total here: the whole reply
    assert parts["prefill"] == pytest.approx(entry["prefill_ms"], abs=1e-3)
    decode = (entry["scheduled_last_token_at"] - entry["scheduled_first_token_at"]) * 1000.0
    assert parts["decode"] == pytest.approx(decode, abs=1e-3)


async def test_vllm_and_openai_report_cached_tokens_but_no_timing() -> None:
    for server in ("vllm", "openai"):
        async with playing(server) as demo:
            messages = [{"role": "user", "content": PROMPT}]
            await _ask(demo, messages)
            record, entry = await _ask(demo, messages)  # a repeat: served from the cache
        assert record.server is not None and record.server["source"] == ["usage"]
        assert record.server["cached_tokens"] == entry["cached_prompt_tokens"] > 0
        assert record.server["prefill_ms"] is None and record.server["queue_ms"] is None
        parts = _parts_add_up(record)
        # Nothing reported of the server's side: nothing invented there; the client's own
        # phases (a new connection per client here) are all that is split out.
        assert list(parts) == ["connection", "request", "server + network"]


async def test_llama_cpp_python_streams_no_report_and_ttft_stays_whole() -> None:
    async with playing("llama-cpp-python") as demo:
        record, _ = await _ask(demo, [{"role": "user", "content": PROMPT}])
    assert record.server is None
    parts = _parts_add_up(record)
    assert list(parts) == ["connection", "request", "server + network"]
    client_side = parts["connection"] + parts["request"]
    assert parts["server + network"] == pytest.approx(record.ttft_ms - client_side)


async def test_reasoning_tokens_from_usage() -> None:
    async with playing("openai") as demo:
        request = make_request("think 12 tokens, reply 3 tokens", model="firsttoken-demo-reasoning")
        _, finished = await collect(make_client(demo.base_url), request)
    record = finished.record
    assert record.reasoning_tokens == 12 and record.server is not None
    assert record.server["reasoning_tokens"] == 12


async def test_vllm_metrics_lm_studio_stats_and_groq_usage_are_read() -> None:
    metrics = {"time_to_first_token_ms": 85.2, "queue_time_ms": 12.3, "generation_time_ms": 900}
    stats = {"time_to_first_token": 0.111, "generation_time": 0.954, "tokens_per_second": 51.4}
    groq = {"usage": {"prompt_tokens": 9, "queue_time": 0.02, "prompt_time": 0.004}}
    cases = (
        ({"metrics": metrics}, {"queue_ms": 12.3, "prefill_ms": 85.2, "decode_ms": 900.0}),
        ({"stats": stats}, {"prefill_ms": 111.0, "decode_ms": 954.0}),
        ({"x_groq": groq}, {"queue_ms": 20.0, "prefill_ms": 4.0, "prompt_tokens": 9}),
    )
    for extra, expected in cases:
        pieces: list[bytes | float] = [
            sse({"role": "assistant", "content": "hi"}),
            sse({}, "stop", **extra),
            DONE,
        ]
        async with Canned(pieces) as canned:
            _, finished = await collect(make_client(canned.base_url), make_request())
        server = finished.record.server
        assert server is not None
        for key, value in expected.items():
            assert server[key] == pytest.approx(value)


def test_a_report_has_every_key_and_takes_only_sane_numbers() -> None:
    report = ServerReport()
    assert report.as_dict() is None  # nothing reported
    report.take({"timings": {"prompt_ms": -5, "predicted_ms": True, "cache_n": "3"}})
    assert report.as_dict() is None  # nothing usable either
    report.take({"usage": {"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 4}}})
    found = report.as_dict()
    assert found is not None and set(found) == {"source", *KEYS}
    assert found["prompt_tokens"] == 10 and found["cached_tokens"] == 4


class _WithPhases(RequestRecord):
    """A record with the HTTP client's `phases_ms` (what a transport that stamps its phases
    sets on the record)."""


def _record(ttft_ms: float, server: dict[str, Any] | None, streamed: bool = True) -> Any:
    record = _WithPhases(model="m", endpoint_host="h", streamed=streamed)
    record.ttft_ms = ttft_ms
    report = ServerReport()
    if server is not None:
        report.take(server)
    record.server = report.as_dict()
    return record


def test_client_phases_are_split_out_and_the_rest_is_the_remainder() -> None:
    record = _record(313.5, {"timings": {"prompt_ms": 250.0, "predicted_ms": 40.0}})
    record.phases_ms = {
        "dns": 1.0,
        "connect": 2.0,
        "request_sent": 0.5,
        "response_head": 300.0,
        "first_byte": 0.0,
        "first_token": 10.0,
    }
    anatomy = ttft_anatomy(record)
    assert anatomy is not None
    assert [(p.name, p.ms, p.measured_by) for p in anatomy.parts] == [
        ("connection", 3.0, CLIENT),
        ("request", 0.5, CLIENT),
        ("prefill", 250.0, SERVER),
        ("network + queue", 60.0, REMAINDER),
    ]
    assert anatomy.compact() == (
        "connection 3.0 ms · request 0.5 ms · prefill 250 ms · network + queue 60 ms"
    )


def test_a_reported_queue_leaves_the_network_and_no_phases_means_no_client_parts() -> None:
    metrics = {"metrics": {"queue_time_ms": 40.0, "time_to_first_token_ms": 100.0}}
    anatomy = ttft_anatomy(_record(200.0, metrics))
    assert anatomy is not None
    assert [(p.name, p.ms) for p in anatomy.parts] == [
        ("queue", 40.0),
        ("prefill", 100.0),
        ("network", 60.0),
    ]


def test_server_figures_larger_than_the_wait_are_not_used() -> None:
    anatomy = ttft_anatomy(_record(100.0, {"timings": {"prompt_ms": 180.0}}))
    assert anatomy is not None and anatomy.note is not None
    assert [(p.name, p.ms) for p in anatomy.parts] == [("server + network", 100.0)]
