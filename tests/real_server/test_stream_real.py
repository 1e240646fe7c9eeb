"""A streamed reply from a server that sends no `usage` in its stream (llama-cpp-python's)."""

from __future__ import annotations

from real_server_support import RealServer, real_config

from tui.engine.bench import run_once
from tui.engine.chat.events import Delta, FirstByte, FirstToken, UsageReported
from tui.engine.chat.request_builder import build_request
from tui.engine.metrics.record import RequestStatus
from tui.engine.tokens.counter import get_counter
from tui.wiring import Endpoint, client_for, request_settings

QUESTION = [{"role": "user", "content": "Count from one to ten in words."}]


async def test_a_stream_without_usage_is_counted_locally_and_timed(llama_server: RealServer):
    config = real_config(llama_server.base_url, max_tokens=24)
    counter = get_counter(config.model)
    client = client_for(config, Endpoint(llama_server.base_url, None), counter)
    request = build_request(
        QUESTION, request_settings(config), counter, trim_enabled=False, stream=True
    )
    events = []
    try:
        async for event in client.stream(request):
            events.append(event)
        whole = await run_once(
            client,
            build_request(
                QUESTION, request_settings(config), counter, trim_enabled=False, stream=False
            ),
        )
    finally:
        await client.aclose()

    finished = events[-1]
    record = finished.record
    assert record.status is RequestStatus.OK, record.error_message
    # This server streams no usage, and says so only by leaving it out.
    assert not any(isinstance(event, UsageReported) for event in events)
    assert record.prompt_tokens_usage is None and record.completion_tokens_usage is None
    # So the output tokens are counted here: one a chunk, as llama.cpp streams them (cl100k's
    # count of the text is another tokenizer's).
    contents = [e for e in events if isinstance(e, Delta) and e.kind == "content"]
    text = "".join(e.text for e in contents)
    assert text == finished.text and text.strip()
    assert record.output_tokens_source == "counted"
    assert record.output_tokens == len(contents)
    assert record.finish_reason in ("length", "stop")
    # Without streaming, the same server does report usage.
    assert whole.record.status is RequestStatus.OK, whole.record.error_message
    assert whole.record.output_tokens_source == "usage"
    assert whole.record.completion_tokens_usage == whole.record.output_tokens
    assert whole.record.prompt_tokens_usage is not None

    # The figures are the events' own stamps, in order.
    first_byte = next(e.at for e in events if isinstance(e, FirstByte))
    first_token = next(e.at for e in events if isinstance(e, FirstToken))
    deltas = [e.at for e in events if isinstance(e, Delta)]
    assert first_byte <= first_token == deltas[0] <= deltas[-1]
    assert record.ttfb_ms is not None and record.ttft_ms is not None
    assert record.total_ms is not None and record.tpot_ms is not None
    assert 0 < record.ttfb_ms <= record.ttft_ms <= record.total_ms
    assert abs((record.ttft_ms - record.ttfb_ms) - (first_token - first_byte) * 1000) < 1e-6
    assert abs((record.total_ms - record.ttft_ms) - (deltas[-1] - first_token) * 1000) < 1e-6
    expected_tpot = (record.total_ms - record.ttft_ms) / (record.output_tokens - 1)
    assert abs(record.tpot_ms - expected_tpot) < 1e-6
    assert record.itl_p50_ms is not None and record.itl_p50_ms <= record.total_ms
