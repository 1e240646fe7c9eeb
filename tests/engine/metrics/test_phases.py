"""TTFT taken apart by the client's own transport: the phases add up to the measured TTFT, a kept
connection shows as reused with no set-up phases, and each phase boundary falls where the
server's own stamps say it must (same process, one perf_counter)."""

from __future__ import annotations

import asyncio
from itertools import accumulate

import pytest
from helpers.client import collect, demo, fault_url, make_client, make_request

from tui.engine.chat.events import RequestStarted
from tui.engine.metrics.phases import SET_UP, AttemptTrace, phase_durations


def assert_adds_up(phases: dict[str, float], ttft_ms: float) -> None:
    # The durations telescope: their sum is the last stamp minus the start, i.e. TTFT.
    assert sum(phases.values()) == pytest.approx(ttft_ms, rel=1e-9, abs=1e-6)
    assert all(duration >= 0 for duration in phases.values())


async def test_phases_add_up_to_ttft_and_a_second_request_is_reused() -> None:
    with demo("instant", rtt_ms=5.0) as server:
        client = make_client(server.base_url)
        try:
            first = [event async for event in client.stream(make_request())][-1].record
            second = [event async for event in client.stream(make_request())][-1].record
        finally:
            await client.aclose()
    assert first.status.value == second.status.value == "ok"
    assert first.phases_ms is not None and second.phases_ms is not None
    assert list(first.phases_ms) == [
        "connect",
        "request_sent",
        "response_head",
        "first_byte",
        "first_token",
    ]  # fmt: skip  (127.0.0.1: nothing to resolve; http: no TLS)
    assert first.connection_reused is False
    assert_adds_up(first.phases_ms, first.ttft_ms)
    assert list(second.phases_ms) == ["request_sent", "response_head", "first_byte", "first_token"]
    assert second.connection_reused is True
    assert not set(SET_UP) & set(second.phases_ms)
    assert_adds_up(second.phases_ms, second.ttft_ms)
    # TTFB is where the first_byte phase ends.
    until_first_byte = sum(list(second.phases_ms.values())[:3])
    assert until_first_byte == pytest.approx(second.ttfb_ms, rel=1e-9, abs=1e-6)


async def test_a_host_name_is_resolved_in_its_own_phase() -> None:
    with demo("instant") as server:
        client = make_client(f"http://localhost:{server.port}/v1")
        _, finished = await collect(client, make_request())
    record = finished.record
    assert record.phases_ms is not None and list(record.phases_ms)[:2] == ["dns", "connect"]
    assert_adds_up(record.phases_ms, record.ttft_ms)


async def test_without_streaming_the_last_phase_is_the_body() -> None:
    with demo("instant") as server:
        _, finished = await collect(make_client(server.base_url), make_request(stream=False))
    record = finished.record
    assert record.phases_ms is not None
    assert list(record.phases_ms)[-2:] == ["response_head", "body"]
    assert_adds_up(record.phases_ms, record.ttft_ms)
    assert record.ttft_ms == record.total_ms


async def test_retries_are_a_phase_of_their_own_inside_ttft() -> None:
    with demo("instant") as server:
        client = make_client(fault_url(server, "429x2"), max_retries=2)
        _, finished = await collect(client, make_request())
    record = finished.record
    assert record.retries == 2 and record.phases_ms is not None
    assert next(iter(record.phases_ms)) == "retries"
    assert record.phases_ms["retries"] >= 2000.0  # two Retry-After: 1 waits, server-given
    assert_adds_up(record.phases_ms, record.ttft_ms)


async def test_phase_boundaries_fall_between_the_servers_own_stamps() -> None:
    with demo("cpu-small") as server:
        before = len(server.requests)
        events, finished = await collect(make_client(server.base_url), make_request("hi " * 200))
        for _ in range(200):
            if len(server.requests) > before:
                break
            await asyncio.sleep(0.01)
        entry = server.requests[before]
    record = finished.record
    assert record.phases_ms is not None
    started = next(e.at for e in events if isinstance(e, RequestStarted))
    ends = dict(
        zip(
            record.phases_ms,
            (started + ms / 1000.0 for ms in accumulate(record.phases_ms.values())),
            strict=True,
        )
    )
    names = list(ends)
    before_write = names.index("request_sent") - 1
    write_began = ends[names[before_write]] if before_write >= 0 else started
    # The server read the request after the client began writing it (the client's own stamp
    # that the write ended may come after the server's read), and its head came back after.
    assert write_began <= entry["received_at"] <= ends["response_head"]
    assert entry["first_token_at"] <= ends["first_token"]
    # The server's prefill sits between the request reaching it and the first token.
    assert ends["first_token"] - ends["request_sent"] >= entry["prefill_ms"] / 1000.0


def test_phase_durations_from_stamps() -> None:
    trace = AttemptTrace(10.0, (("dns", 10.5), ("connect", 11.0), ("request_sent", 11.25)), False)
    phases = phase_durations(8.0, trace, first_byte_at=12.0, first_token_at=13.0, streamed=True)
    assert phases == {
        "retries": 2000.0,
        "dns": 500.0,
        "connect": 500.0,
        "request_sent": 250.0,
        "first_byte": 750.0,
        "first_token": 1000.0,
    }
    assert sum(phases.values()) == (13.0 - 8.0) * 1000.0
    failed = phase_durations(10.0, trace, first_byte_at=None, first_token_at=None, streamed=True)
    assert list(failed) == ["dns", "connect", "request_sent"]  # as far as it got
