"""build_request (trimmed or not, always counted), open_endpoint (demo fallback), client_for."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.client import TEST_KEY, collect, make_request

from tui.config import Config
from tui.engine.chat.request_builder import build_request
from tui.engine.tokens.counter import get_counter
from tui.wiring import client_for, open_endpoint, request_settings


def _long_chat(turns: int = 30) -> list[dict]:
    messages = [{"role": "system", "content": "be brief"}]
    for i in range(turns):
        messages.append({"role": "user", "content": f"q{i} " + "filler " * 40})
        messages.append({"role": "assistant", "content": f"a{i} " + "filler " * 40})
    messages.append({"role": "user", "content": "latest"})
    return messages


def test_trim_on_fits_the_budget_and_keeps_system_and_latest() -> None:
    counter = get_counter("gpt-4o-mini")
    messages = _long_chat()
    request = build_request(
        messages, request_settings(Config()), counter, trim_enabled=True, stream=True, budget=500
    )
    assert request.trim is not None and request.trim.dropped
    assert request.trim.tokens_after <= 500 < request.trim.tokens_before
    assert request.messages[0] == messages[0] and request.messages[-1] == messages[-1]
    assert request.prompt_tokens_counted == request.trim.tokens_after
    assert request.prompt_tokens_estimated == counter.calibrated(request.trim.tokens_after)
    assert request.prompt_tokens_exact is counter.exact


def test_trim_off_sends_everything_and_still_counts() -> None:
    counter = get_counter("gpt-4o-mini")
    messages = _long_chat()
    request = build_request(
        messages, request_settings(Config()), counter, trim_enabled=False, stream=False, budget=5
    )
    assert request.trim is None and request.messages == messages
    assert request.prompt_tokens_counted == counter.count_messages(messages)
    assert request.stream is False and "stream_options" not in request.body()


def test_budget_defaults_to_the_config_and_max_tokens_to_the_reserve() -> None:
    config = Config(token_budget=300, max_tokens=4096, reserve_for_output=1000, temperature=0.7)
    request = build_request(
        _long_chat(), request_settings(config), get_counter("x"), trim_enabled=True, stream=True
    )
    assert request.trim is not None and request.trim.budget == 300
    assert request.max_tokens == 1000 == config.output_limit
    assert request.temperature == 0.7 and request.model == config.model
    body = request.body()
    assert body["stream_options"] == {"include_usage": True} and body["max_tokens"] == 1000


def test_model_override() -> None:
    request = build_request(
        [{"role": "user", "content": "x"}],
        request_settings(Config()),
        get_counter("m"),
        trim_enabled=False,
        stream=True,
        model="other",
    )
    assert request.model == "other"


def test_configured_endpoint_is_used_as_is() -> None:
    config = Config(base_url="http://example.invalid/v1", api_key=TEST_KEY)
    with open_endpoint(config) as endpoint:
        assert endpoint.base_url == "http://example.invalid/v1"
        assert endpoint.api_key == TEST_KEY and endpoint.simulated is False
        assert endpoint.notice is None


async def test_demo_endpoint_when_nothing_is_configured(tmp_path: Path) -> None:
    config = Config(demo_preset="instant", chunk_timeout_ms=1234, max_retries=1)
    with open_endpoint(config) as endpoint:
        assert endpoint.simulated is True and endpoint.api_key == "demo"
        assert endpoint.base_url.startswith("http://127.0.0.1:") and endpoint.base_url.endswith(
            "/v1"
        )
        assert endpoint.notice == (
            "No API key or base_url configured: using the embedded demo endpoint at "
            f"{endpoint.base_url} (simulated latency, preset instant)."
        )
        client = client_for(config, endpoint, get_counter("m"))
        assert client.chunk_timeout_ms == 1234 and client.max_retries == 1
        _, finished = await collect(client, make_request("reply 4 tokens"))
    assert finished.record.simulated is True and finished.record.output_tokens == 4
    json.dumps(finished.record.to_dict())


async def test_usage_calibrates_the_counter() -> None:
    counter = get_counter("calibration-test-model")
    config = Config(demo_preset="instant")
    messages = [{"role": "user", "content": "calibrate me, reply 2 tokens"}]
    request = build_request(
        messages, request_settings(config), counter, trim_enabled=False, stream=True
    )
    before = counter.calibration_samples
    with open_endpoint(config) as endpoint:
        _, finished = await collect(client_for(config, endpoint, counter), request)
    assert finished.record.prompt_tokens_usage is not None
    assert counter.calibration_samples == before + 1
