"""A pause is not a stall, and a buffered stream is caught: the demo endpoint's pause, stall and
buffering faults over real HTTP, judged against the server's own stamps."""

from __future__ import annotations

import asyncio

import pytest
from helpers.client import collect, demo, fault_url, make_client, make_request

from tui.engine.chat.events import Delta, Paused
from tui.engine.metrics.buffering import is_buffered
from tui.engine.metrics.record import RequestStatus


async def test_a_pause_longer_than_the_chunk_timeout_is_reported_and_the_reply_goes_on() -> None:
    with demo("instant", decode_tokens_per_s=200.0) as server:
        client = make_client(
            fault_url(server, "pause-600"), chunk_timeout_ms=100, stall_timeout_ms=5000
        )
        events, finished = await collect(client, make_request("reply 10 tokens"))
        (entry,) = server.requests
    record = finished.record
    assert record.status is RequestStatus.OK and finished.text
    (pause,) = entry["pauses"]  # the server paused once, after some tokens
    (paused,) = [e for e in events if isinstance(e, Paused)]
    deltas = [e for e in events if isinstance(e, Delta)]
    before = deltas[pause["after_tokens"] - 1]  # the last token before the pause
    assert paused.since == pytest.approx(before.at, abs=1e-9) and paused.at > paused.since
    assert events.index(paused) == events.index(before) + 1  # live, before the next token
    assert record.pauses == 1
    server_gap_ms = (pause["resumed_at"] - pause["paused_at"]) * 1000.0
    assert server_gap_ms >= 600.0
    assert record.longest_gap_ms is not None and record.longest_gap_ms > 100.0


async def test_a_reply_cancelled_during_a_pause_counts_that_pause() -> None:
    with demo("instant", decode_tokens_per_s=200.0) as server:
        client = make_client(
            fault_url(server, "pause-5000"), chunk_timeout_ms=100, stall_timeout_ms=30_000
        )
        cancel = asyncio.Event()
        events = []
        async for event in client.stream(make_request("reply 10 tokens"), cancel):
            events.append(event)
            if isinstance(event, Paused):
                cancel.set()  # Esc while no token comes
        await client.aclose()
    record = events[-1].record  # type: ignore[attr-defined]
    assert record.status is RequestStatus.CANCELLED
    paused = next(e for e in events if isinstance(e, Paused))
    assert record.pauses == 1
    # The open gap ran at least from the last token to when the pause was reported.
    assert record.longest_gap_ms is not None
    assert record.longest_gap_ms >= (paused.at - paused.since) * 1000.0


async def test_only_the_stall_limit_ends_the_stream_and_its_message_names_the_key() -> None:
    with demo("instant") as server:
        client = make_client(
            fault_url(server, "stall-3000"),
            chunk_timeout_ms=50,
            stall_timeout_ms=300,
            stall_setting="stall_timeout_ms under [llm.streaming] in /cfg/config.toml",
        )
        events, finished = await collect(client, make_request("reply 20 tokens"))
    record = finished.record
    assert record.status is RequestStatus.STALLED and finished.text  # the partial reply kept
    assert any(isinstance(e, Paused) for e in events)  # reported as a pause first
    assert record.error_message is not None
    assert "raise stall_timeout_ms under [llm.streaming] in /cfg/config.toml" in (
        record.error_message
    )
    assert record.longest_gap_ms is not None and record.longest_gap_ms >= 300.0


async def test_without_a_stall_limit_the_chunk_timeout_still_ends_the_stream() -> None:
    with demo("instant") as server:
        client = make_client(fault_url(server, "stall-3000"), chunk_timeout_ms=100)
        events, finished = await collect(client, make_request("reply 20 tokens"))
    assert finished.record.status is RequestStatus.STALLED
    assert not any(isinstance(e, Paused) for e in events)


async def test_a_buffered_stream_is_caught_and_a_streamed_one_is_not() -> None:
    for server_name in ("openai", "llamacpp"):
        with demo("instant", decode_tokens_per_s=150.0, server=server_name) as server:
            request = make_request("reply 24 tokens")
            _, buffered = await collect(make_client(fault_url(server, "buffered")), request)
            _, streamed = await collect(make_client(server.base_url), request)
        assert buffered.record.status is RequestStatus.OK
        assert buffered.record.buffered is True, server_name
        assert streamed.record.buffered is False, server_name


async def test_a_short_buffered_reply_is_caught_from_the_servers_decode_time() -> None:
    # Six tokens in one burst could be a fast server; llama.cpp's timings say decoding took
    # a quarter of a second, so they were held back.
    with demo("instant", decode_tokens_per_s=20.0, server="llamacpp") as server:
        request = make_request("reply 6 tokens")
        _, finished = await collect(make_client(fault_url(server, "buffered")), request)
    server_report = finished.record.server
    assert server_report is not None and server_report["decode_ms"] >= 200.0
    assert finished.record.buffered is True


def test_buffering_rules_on_receipt_times() -> None:
    burst = [1.000 + i * 0.0001 for i in range(25)]  # 25 chunks within 2.4 ms, 1 s after start
    assert is_buffered(streamed=True, started_at=0.0, token_times=burst, server_decode_ms=None)
    few = burst[:6]
    assert not is_buffered(streamed=True, started_at=0.0, token_times=few, server_decode_ms=None)
    assert is_buffered(streamed=True, started_at=0.0, token_times=few, server_decode_ms=300.0)
    spread = [1.0 + i * 0.02 for i in range(25)]  # a real stream: 50 tokens/s
    assert not is_buffered(
        streamed=True, started_at=0.0, token_times=spread, server_decode_ms=500.0
    )
    quick = [0.002 + i * 0.0001 for i in range(25)]  # all over in 5 ms: a fast server
    assert not is_buffered(streamed=True, started_at=0.0, token_times=quick, server_decode_ms=None)
    assert (
        is_buffered(streamed=False, started_at=0.0, token_times=burst, server_decode_ms=None)
        is None
    )
