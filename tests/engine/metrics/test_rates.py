"""A rate divides one span by the tokens that arrived in it: TPOT and tokens/s run from the
first token's receipt to the last one's, over the tokens after the first. Over real HTTP: a
cancelled reply (no usage) counted by its chunks, not by another tokenizer's count of its
text; hidden reasoning (in usage, never streamed) kept out of the span's tokens; chunks that
carry several tokens counted by the text after the first chunk."""

from __future__ import annotations

import asyncio

import pytest
from helpers.client import DONE, Canned, collect, demo, make_client, make_request, sse

from tui.demo.model_kinds import OPENAI_REASONING_MODEL_ID
from tui.engine.chat.events import Delta, FirstToken
from tui.engine.metrics.record import RequestRecord, RequestStatus, decode_rate, derive_timings
from tui.engine.tokens.counter import get_counter


def chunks_of(events: list[object]) -> list[Delta]:
    return [e for e in events if isinstance(e, Delta) and e.new_chunk]


def span_s(events: list[object]) -> float:
    first = next(e.at for e in events if isinstance(e, FirstToken))
    return chunks_of(events)[-1].at - first


def test_decode_rate_divides_one_span_by_the_tokens_in_it() -> None:
    tpot, per_s = decode_rate(59, 1.0)
    assert tpot == pytest.approx(1000 / 59) and per_s == pytest.approx(59.0)
    assert decode_rate(0, 1.0) == (None, None)  # no token after the first: no rate
    assert decode_rate(None, 1.0) == (None, None)
    assert decode_rate(3, 0.0) == (0.0, None)  # one burst: no time to divide by


def test_without_a_count_after_the_first_it_is_one_token_a_chunk() -> None:
    record = RequestRecord(model="m", endpoint_host="h", streamed=True)
    derive_timings(
        record,
        first_token_at=1.0,
        last_token_at=2.0,
        token_times=[1.0, 2.0],
        started_at=0.5,
        output_tokens=61,
    )
    assert record.tpot_ms == pytest.approx(1000 / 60) and record.output_tokens_per_s == 60.0


async def test_a_cancelled_reply_is_counted_by_its_chunks_not_another_tokenizer() -> None:
    counter = get_counter("demo-model").load()
    with demo("instant", decode_tokens_per_s=200.0) as server:
        cancel = asyncio.Event()
        client = make_client(server.base_url, counter=counter)
        events: list[object] = []
        async for event in client.stream(make_request("reply 400 tokens", max_tokens=1000), cancel):
            events.append(event)
            if len(chunks_of(events)) == 40:
                cancel.set()
        await client.aclose()
    record = events[-1].record  # type: ignore[attr-defined]
    assert record.status is RequestStatus.CANCELLED and record.completion_tokens_usage is None
    chunks = len(chunks_of(events))
    # The demo streams one of its own tokens a chunk; cl100k counts its text otherwise.
    assert counter.count_text(events[-1].text) != chunks  # type: ignore[attr-defined]
    assert record.output_tokens == chunks and record.output_tokens_source == "counted"
    assert record.output_tokens_per_s == pytest.approx((chunks - 1) / span_s(events))
    assert record.tpot_ms == pytest.approx(span_s(events) * 1000 / (chunks - 1))


async def test_hidden_reasoning_is_not_in_the_span_of_the_visible_tokens() -> None:
    with demo("instant", decode_tokens_per_s=200.0) as server:
        client = make_client(server.base_url)
        request = make_request("reply 40 tokens", model=OPENAI_REASONING_MODEL_ID, max_tokens=1000)
        events, finished = await collect(client, request)
    record = finished.record
    visible = len(chunks_of(events))
    assert record.reasoning_tokens and record.output_tokens == visible + record.reasoning_tokens
    assert record.output_tokens_source == "usage"
    assert record.output_tokens_per_s == pytest.approx((visible - 1) / span_s(events))


async def test_chunks_carrying_several_tokens_are_counted_by_their_text() -> None:
    counter = get_counter("gpt-4o-mini").load()
    words = [" ".join(f"word{i}x{j}" for j in range(12)) + " " for i in range(5)]
    pieces: list[bytes | float] = []
    for text in words:
        pieces += [sse({"content": text}), 0.05]
    pieces += [sse({}, finish="stop"), DONE]  # no usage
    async with Canned(pieces) as server:
        client = make_client(server.base_url, counter=counter)
        events, finished = await collect(client, make_request())
    record = finished.record
    whole, first = counter.count_text("".join(words)), counter.count_text(words[0])
    assert whole > 2 * len(words)  # several tokens a chunk by any count
    assert record.output_tokens == whole and record.output_tokens_source == "counted"
    assert record.output_tokens_per_s == pytest.approx((whole - first) / span_s(events))


async def test_a_chunk_with_thinking_and_content_is_one_chunk() -> None:
    pieces: list[bytes | float] = [
        sse({"reasoning_content": "hmm"}),
        sse({"reasoning_content": " so", "content": "Yes"}),
        sse({"content": "."}),
        sse({}, finish="stop"),
        DONE,
    ]
    async with Canned(pieces) as server:
        events, finished = await collect(make_client(server.base_url), make_request())
    deltas = [e for e in events if isinstance(e, Delta)]
    assert [d.new_chunk for d in deltas] == [True, True, False, True]
    assert finished.record.output_tokens == 3  # one a chunk, without usage or counter
