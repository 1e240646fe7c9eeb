"""How a stream can end other than well: stalled, ended early, empty, cancelled; and retries."""

from __future__ import annotations

import asyncio

import pytest
from helpers.client import collect, demo, fault_url, make_client, make_request

from tui.engine.chat.events import Delta, FirstToken, RequestStarted, Retrying
from tui.engine.metrics.record import RequestStatus


@pytest.fixture(scope="module")
def instant():
    with demo("instant") as server:
        yield server


async def test_stall_ends_the_stream_keeping_the_partial_reply(instant) -> None:
    client = make_client(fault_url(instant, "stall-5000"), chunk_timeout_ms=150)
    events, finished = await collect(client, make_request("reply 20 tokens"))
    record = finished.record
    assert record.status is RequestStatus.STALLED and record.error_kind == "stalled"
    assert "chunk_timeout_ms" in record.error_message
    assert finished.text and sum(isinstance(e, Delta) for e in events) == 5
    assert record.output_tokens == 5 and record.output_tokens_source == "counted"
    # The stall is detected from the last chunk: Finished comes after chunk_timeout_ms.
    assert finished.at - [e.at for e in events if isinstance(e, Delta)][-1] >= 0.15
    assert record.total_ms is not None and record.ttft_ms <= record.total_ms


async def test_a_short_pause_is_not_a_stall(instant) -> None:
    client = make_client(fault_url(instant, "stall-50"), chunk_timeout_ms=2000)
    _, finished = await collect(client, make_request("reply 10 tokens"))
    assert finished.record.status is RequestStatus.OK
    assert finished.record.output_tokens == 10


async def test_stream_closed_without_finish_is_ended_early(instant) -> None:
    _, finished = await collect(make_client(fault_url(instant, "early")), make_request())
    record = finished.record
    assert record.status is RequestStatus.ENDED_EARLY and record.error_kind == "ended_early"
    assert finished.text and record.finish_reason is None and record.retries == 0


async def test_empty_stream_is_ended_early_with_context_hint(instant) -> None:
    _, finished = await collect(make_client(fault_url(instant, "empty")), make_request())
    record = finished.record
    assert record.status is RequestStatus.ENDED_EARLY and record.error_kind == "empty_stream"
    assert "context window" in record.error_message
    assert "send a shorter prompt" in record.error_message  # one message: nothing to trim
    assert finished.text == "" and record.retries == 0


async def test_cancel_before_the_first_byte(instant) -> None:
    cancel = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.call_later(0.1, cancel.set)
    client = make_client(fault_url(instant, "hang"), timeout_s=30.0)
    _, finished = await collect(client, make_request(), cancel)
    assert finished.record.status is RequestStatus.CANCELLED
    assert finished.record.error_kind is None and finished.text == ""
    # Cancelled, not timed out (timeout_s is 30 s): the pending read was raced against cancel.
    # The server saw the connection go away: nothing is left hanging.
    for _ in range(100):
        if instant.requests[-1]["done_at"] is not None:
            break
        await asyncio.sleep(0.02)
    assert instant.requests[-1]["done_at"] is not None


async def test_cancel_already_set_sends_nothing(instant) -> None:
    cancel = asyncio.Event()
    cancel.set()
    before = len(instant.requests)
    _, finished = await collect(make_client(instant.base_url), make_request(), cancel)
    assert finished.record.status is RequestStatus.CANCELLED
    assert len(instant.requests) == before


async def test_cancel_mid_stream_keeps_the_partial_reply() -> None:
    # 20 tokens/s: plenty of time to cancel between tokens.
    with demo("instant", decode_tokens_per_s=20.0) as server:
        cancel = asyncio.Event()
        client = make_client(server.base_url)
        events = []
        async for event in client.stream(make_request("reply 100 tokens"), cancel):
            events.append(event)
            if isinstance(event, Delta) and sum(isinstance(e, Delta) for e in events) == 3:
                cancel.set()
        await client.aclose()
        finished = events[-1]
        assert finished.record.status is RequestStatus.CANCELLED
        assert finished.text == "".join(e.text for e in events if isinstance(e, Delta))
        assert 3 <= sum(isinstance(e, Delta) for e in events) < 100
        assert finished.record.ttft_ms is not None and finished.record.output_tokens
        for _ in range(100):
            if server.requests[-1]["done_at"] is not None:
                break
            await asyncio.sleep(0.02)
        entry = server.requests[-1]
        assert entry["done_at"] is not None and entry["output_tokens"] < 100


async def test_consumer_cancelling_its_task_closes_the_response() -> None:
    with demo("instant", decode_tokens_per_s=20.0) as server:
        client = make_client(server.base_url)

        async def consume() -> None:
            async for _ in client.stream(make_request("reply 100 tokens")):
                pass

        task = asyncio.ensure_future(consume())
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await client.aclose()
        for _ in range(100):
            if server.requests[-1]["done_at"] is not None:
                break
            await asyncio.sleep(0.02)
        assert server.requests[-1]["done_at"] is not None
        assert server.requests[-1]["output_tokens"] < 100


async def test_breaking_out_of_the_loop_closes_the_response() -> None:
    with demo("instant", decode_tokens_per_s=20.0) as server:
        client = make_client(server.base_url)
        stream = client.stream(make_request("reply 100 tokens"))
        async for event in stream:
            if isinstance(event, FirstToken):
                break
        await stream.aclose()
        await client.aclose()
        for _ in range(100):
            if server.requests[-1]["done_at"] is not None:
                break
            await asyncio.sleep(0.02)
        assert server.requests[-1]["done_at"] is not None


async def test_retries_on_429_then_success_ttft_includes_the_wait() -> None:
    with demo("instant") as server:
        client = make_client(fault_url(server, "429x2"), max_retries=2)
        events, finished = await collect(client, make_request())
        entries = server.requests
    record = finished.record
    assert record.status is RequestStatus.OK and record.retries == 2
    retrying = [e for e in events if isinstance(e, Retrying)]
    assert [e.attempt for e in retrying] == [1, 2]
    assert all(e.delay_s == 1.0 for e in retrying)  # the server's Retry-After: 1
    assert "429" in retrying[0].reason
    starts = [e for e in events if isinstance(e, RequestStarted)]
    assert [e.attempt for e in starts] == [0, 1, 2]
    first_token = next(e.at for e in events if isinstance(e, FirstToken))
    # TTFT is measured from the FIRST attempt, so it includes both Retry-After waits.
    assert record.ttft_ms == pytest.approx((first_token - starts[0].at) * 1000)
    assert record.ttft_ms >= 2000.0
    assert len(entries) == 3


async def test_retries_are_bounded(instant) -> None:
    client = make_client(fault_url(instant, "500"), max_retries=1)
    events, finished = await collect(client, make_request())
    assert finished.record.status is RequestStatus.ERROR
    assert finished.record.retries == 1
    assert sum(isinstance(e, RequestStarted) for e in events) == 2


async def test_connection_errors_are_retried() -> None:
    from helpers.client import closed_port

    client = make_client(f"http://127.0.0.1:{closed_port()}/v1", max_retries=1)
    _, finished = await collect(client, make_request())
    assert finished.record.retries == 1 and finished.record.error_kind == "connection"


async def test_cancel_during_backoff() -> None:
    with demo("instant") as server:
        cancel = asyncio.Event()
        client = make_client(fault_url(server, "429x5"), max_retries=5)
        events = []
        async for event in client.stream(make_request(), cancel):
            events.append(event)
            if isinstance(event, Retrying):
                cancel.set()
        await client.aclose()
    assert events[-1].record.status is RequestStatus.CANCELLED
    # The 1 s Retry-After wait was interrupted: no second attempt ever started.
    assert sum(isinstance(e, RequestStarted) for e in events) == 1
    assert len(server.requests) == 1
