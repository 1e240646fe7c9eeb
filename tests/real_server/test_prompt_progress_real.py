"""Asking a real llama.cpp-based server for its prompt progress (`return_progress`) never
costs the reply: llama-cpp-python's server does not send progress, and the request is
answered whole, with the field taken or, if refused, dropped and remembered."""

from __future__ import annotations

from real_server_support import RealServer, real_config

from tui.engine.chat.dialects import NO_PROGRESS
from tui.engine.chat.events import FirstToken, PromptProgress
from tui.engine.chat.request_builder import build_request
from tui.engine.metrics.record import RequestStatus
from tui.engine.tokens.counter import get_counter
from tui.wiring import Endpoint, client_for, request_settings

QUESTION = [{"role": "user", "content": "Name three colours. " * 40}]


async def test_a_real_server_answers_a_request_that_asks_for_prompt_progress(
    llama_server: RealServer,
) -> None:
    config = real_config(llama_server.base_url, max_tokens=8)
    counter = get_counter(config.model)
    endpoint = Endpoint(llama_server.base_url, None, llamacpp=True)
    client = client_for(config, endpoint, counter)
    assert client.prompt_progress
    request = build_request(
        QUESTION, request_settings(config), counter, trim_enabled=False, stream=True
    )
    try:
        events = [event async for event in client.stream(request)]
    finally:
        await client.aclose()
    record = events[-1].record
    assert record.status is RequestStatus.OK, record.error_message
    assert any(isinstance(event, FirstToken) for event in events)
    assert record.adjustments in ([], [NO_PROGRESS])
    # llama-cpp-python computes the prompt without reporting it: no progress, nothing guessed.
    assert not any(isinstance(event, PromptProgress) for event in events)
    assert record.prompt_progress is None
