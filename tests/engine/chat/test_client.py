"""The measured client over real HTTP on loopback: events, records, timing against the server."""

from __future__ import annotations

import asyncio

import pytest
from helpers.client import collect, demo, fault_url, make_client, make_request

from tui.engine.chat.events import (
    Delta,
    FirstAnswerToken,
    FirstByte,
    FirstToken,
    RequestStarted,
    UsageReported,
)
from tui.engine.metrics.record import RequestClass, RequestStatus, Thresholds, TtftLevel
from tui.engine.tokens.counter import get_counter


@pytest.fixture(scope="module")
def instant():
    with demo("instant") as server:
        yield server


@pytest.fixture(scope="module")
def cpu_small():
    with demo("cpu-small") as server:
        yield server


def _server_entry(server, index: int = -1) -> dict:
    return server.requests[index]


async def _entry_after(server, count_before: int) -> dict:
    """The log entry of the request made after `count_before` entries existed.

    The server appends an entry once it has finished writing, which can be a moment after the
    client has read the last chunk, so wait (bounded) instead of reading requests[-1] at once.
    """
    for _ in range(200):
        entries = server.requests
        if len(entries) > count_before:
            return entries[count_before]
        await asyncio.sleep(0.01)
    raise AssertionError("the demo server logged no entry for the request")


async def test_streaming_events_in_order_and_record_filled(instant) -> None:
    events, finished = await collect(make_client(instant.base_url), make_request())
    kinds = [type(e) for e in events]
    assert kinds[0] is RequestStarted
    assert kinds.index(FirstByte) < kinds.index(FirstToken) < kinds.index(Delta)
    assert kinds[-2] is UsageReported  # the trailing usage chunk, after all deltas
    record = finished.record
    assert record.status is RequestStatus.OK
    assert record.finish_reason == "length" or record.finish_reason == "stop"
    assert record.streamed is True
    assert record.output_tokens == 8 == record.completion_tokens_usage
    assert record.output_tokens_source == "usage"
    assert record.prompt_tokens_usage == _server_entry(instant)["prompt_tokens"]
    text = "".join(e.text for e in events if isinstance(e, Delta) and e.kind == "content")
    assert finished.text == text and text
    assert record.endpoint_host == instant.base_url.split("//")[1].split("/")[0]
    assert record.error_kind is None and record.retries == 0


async def test_request_body_carries_stream_usage_temperature_and_max_tokens(instant) -> None:
    await collect(make_client(instant.base_url), make_request(temperature=0.3, max_tokens=33))
    entry = _server_entry(instant)
    assert entry["stream"] is True and entry["include_usage"] is True
    assert entry["temperature"] == 0.3 and entry["max_tokens"] == 33
    assert entry["model"] == "demo-model"


async def test_non_streaming_ttft_equals_total(instant) -> None:
    events, finished = await collect(make_client(instant.base_url), make_request(stream=False))
    record = finished.record
    assert record.status is RequestStatus.OK and record.streamed is False
    assert record.ttft_ms == record.total_ms == record.ttfb_ms
    assert record.tpot_ms is None and record.output_tokens == 8
    assert _server_entry(instant)["stream"] is False
    assert _server_entry(instant)["include_usage"] is False
    assert [e.kind for e in events if isinstance(e, Delta)] == ["content"]


async def test_usage_absent_counts_locally(instant) -> None:
    counter = get_counter("gpt-4o-mini")
    client = make_client(fault_url(instant, "nousage"), counter=counter)
    events, finished = await collect(client, make_request())
    record = finished.record
    assert record.status is RequestStatus.OK
    assert not any(isinstance(e, UsageReported) for e in events)
    assert record.output_tokens_source == "counted"
    assert record.completion_tokens_usage is None and record.prompt_tokens_usage is None
    # One token a chunk, as the demo streams them: the chunks are its own count.
    assert record.output_tokens == sum(isinstance(e, Delta) and e.new_chunk for e in events)


async def test_usage_absent_in_a_whole_body_counts_its_text(instant) -> None:
    counter = get_counter("gpt-4o-mini")
    client = make_client(fault_url(instant, "nousage"), counter=counter)
    _, finished = await collect(client, make_request(stream=False))
    record = finished.record
    assert record.output_tokens_source == "counted"
    assert record.output_tokens == counter.count_text(finished.text)


async def test_timing_consistent_with_the_servers_own_timestamps(cpu_small) -> None:
    # cpu-small: ~1.2 ms per prompt token of prefill, 60 tokens/s decode.
    prompt = "word " * 300 + "reply 6 tokens"
    count_before = len(cpu_small.requests)
    events, finished = await collect(make_client(cpu_small.base_url), make_request(prompt))
    record = finished.record
    entry = await _entry_after(cpu_small, count_before)
    started = next(e.at for e in events if isinstance(e, RequestStarted))
    first_byte = next(e.at for e in events if isinstance(e, FirstByte))
    first_token = next(e.at for e in events if isinstance(e, FirstToken))
    deltas = [e.at for e in events if isinstance(e, Delta)]
    # perf_counter is one monotonic clock for the client and the in-process server.
    assert started <= entry["received_at"] <= entry["first_token_at"] <= first_token
    assert first_byte <= first_token
    assert entry["last_token_at"] <= deltas[-1]
    # The record is exactly what the event stamps say.
    assert record.ttft_ms == pytest.approx((first_token - started) * 1000)
    assert record.ttfb_ms == pytest.approx((first_byte - started) * 1000)
    assert record.total_ms == pytest.approx((deltas[-1] - started) * 1000)
    # TTFT covers at least the server's simulated prefill and its own receive-to-token gap.
    server_gap_ms = (entry["first_token_at"] - entry["received_at"]) * 1000
    assert record.ttft_ms >= server_gap_ms >= entry["prefill_ms"]
    assert record.ttfb_ms <= record.ttft_ms <= record.total_ms
    # Decode at 60 tok/s: TPOT is (total - TTFT) / (n - 1), ITL p50 <= p95.
    assert record.output_tokens == 6
    assert record.tpot_ms == pytest.approx((record.total_ms - record.ttft_ms) / 5)
    assert record.itl_p50_ms is not None and record.itl_p95_ms is not None
    assert record.itl_p50_ms <= record.itl_p95_ms
    assert record.output_tokens_per_s == pytest.approx(1000 / record.tpot_ms)


async def test_longer_prompt_means_longer_ttft(cpu_small) -> None:
    short = (await collect(make_client(cpu_small.base_url), make_request("hi reply 2 tokens")))[1]
    long_prompt = "token " * 600 + "reply 2 tokens"
    long = (await collect(make_client(cpu_small.base_url), make_request(long_prompt)))[1]
    assert long.record.ttft_ms > short.record.ttft_ms


async def test_one_verdict_the_class_target_is_the_ok_warn_boundary() -> None:
    # A short question is short Q&A whatever the configured output limit; its target decides
    # the colour: met is ok, missed is warn (until the error threshold), never both.
    classes = (RequestClass("short_qa", 10.0, 512), RequestClass("long_generation", 2000.0))
    with demo("instant", rtt_ms=30.0) as server:
        client = make_client(
            server.base_url,
            thresholds=Thresholds(warn_ms=1200.0, error_ms=10_000.0),
            request_classes=classes,
        )
        request = make_request("What is the capital of France?", max_tokens=2048)
        _, finished = await collect(client, request)
    record = finished.record
    assert record.ttft_ms >= 30.0
    assert record.request_class == "short_qa" and record.ttft_target_ms == 10.0
    assert record.request_class_reason == "a short prompt, no length asked"
    assert record.target_met is False and record.ttft_level is TtftLevel.WARN

    with demo("instant") as server:
        client = make_client(server.base_url)
        asked = make_request(max_tokens=4096, max_tokens_asked=True)
        _, finished = await collect(client, asked)
    record = finished.record
    assert record.request_class == "long_generation" and record.target_met is True
    assert record.request_class_reason == "max_tokens 4,096 asked"
    assert record.ttft_level is TtftLevel.OK


async def test_prompt_estimate_and_trim_fields_come_from_the_request(instant) -> None:
    request = make_request(prompt_tokens_estimated=42, prompt_tokens_exact=True)
    _, finished = await collect(make_client(instant.base_url, simulated=True), request)
    record = finished.record
    assert record.prompt_tokens_estimated == 42 and record.prompt_tokens_exact is True
    assert record.trim_enabled is False and record.dropped == []
    assert record.simulated is True


async def test_list_models(instant) -> None:
    client = make_client(instant.base_url)
    try:
        models = await client.list_models()
    finally:
        await client.aclose()
    assert models and all(isinstance(m, str) for m in models)


async def test_api_key_never_in_the_record(instant) -> None:
    from helpers.client import TEST_KEY

    _, finished = await collect(make_client(fault_url(instant, "401")), make_request())
    assert TEST_KEY not in repr(finished.record.to_dict())
    assert TEST_KEY[-4:] in (finished.record.error_message or "")


def _chunk(delta: dict, finish_reason: str | None = None) -> dict:
    # A streamed chunk as the client sees it: the event's JSON, parsed to a plain dict.
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def test_what_counts_as_the_first_token() -> None:
    # Parsing only (the chunks a reasoning model or a tool call streams); no HTTP involved.
    from tui.engine.chat.attempt import has_token
    from tui.engine.chat.reply_assembly import Reply

    role_only = _chunk({"role": "assistant", "content": ""})
    reasoning = _chunk({"reasoning_content": "thinking"})
    tool = _chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{"}}]})
    content = _chunk({"content": "hi"})
    assert not has_token(role_only)
    assert has_token(reasoning) and has_token(tool) and has_token(content)
    reply = Reply()
    events = reply.on_chunk(role_only, 1.0, True)
    assert [type(e) for e in events] == [FirstByte] and reply.first_token_at is None
    events = reply.on_chunk(reasoning, 2.0, True)
    assert [type(e) for e in events] == [FirstToken, Delta] and reply.first_token_at == 2.0
    assert events[1].kind == "reasoning" and reply.text == ""
    events = reply.on_chunk(tool, 3.0, True)
    # The answer starts with the first tool call or content, after the reasoning.
    assert [type(e) for e in events] == [FirstAnswerToken, Delta]
    assert events[1].kind == "tool_call" and events[1].text == "f{"
    assert reply.first_answer_at == 3.0
    assert [type(e) for e in reply.on_chunk(content, 4.0, True)] == [Delta]
    assert reply.text == "hi" and list(reply.token_times) == [2.0, 3.0, 4.0]
    assert reply.reasoning == "thinking"
