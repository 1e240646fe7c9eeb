"""Each real server the demo endpoint plays: usage, llama.cpp's timings, and `[demo] server`."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.demo_wire import deltas, post, running, stream_chunks

from tui.config import ConfigError, ConfigFlags, load_config
from tui.config_schema import KNOWN_DEMO_SERVERS
from tui.demo import DemoServer
from tui.demo.dialects import SERVER_DIALECTS
from tui.demo.latency_model import PRESETS, latency_model

USER = [{"role": "user", "content": "How fast is the first token? reply 12 tokens"}]
TIMINGS_KEYS = [
    "cache_n",
    "prompt_n",
    "prompt_ms",
    "prompt_per_token_ms",
    "prompt_per_second",
    "predicted_n",
    "predicted_ms",
    "predicted_per_token_ms",
    "predicted_per_second",
]
# Slow enough that the schedule, not the machine, sets each token's time.
LLAMACPP = {"server": "llamacpp", "prefill_ms_per_token": 1.2, "decode_tokens_per_s": 400}


async def test_llamacpp_stream_ends_with_timings_matching_the_log() -> None:
    async with running(**LLAMACPP) as demo:
        body = {"model": "m", "messages": USER, "stream_options": {"include_usage": True}}
        chunks = await stream_chunks(demo.base_url, body)
        entry = demo.requests[0]
    assert chunks[-1] == "[DONE]"
    *content, finish, last, _ = chunks
    assert all("timings" not in c for c in [*content, finish])
    assert finish["choices"][0]["finish_reason"] == "stop"
    # llama.cpp puts `timings` on the last chunk: the usage chunk when usage was asked for.
    assert last["choices"] == [] and list(last["timings"]) == TIMINGS_KEYS
    timings, usage = last["timings"], last["usage"]
    assert usage == {
        "prompt_tokens": entry["prompt_tokens"],
        "completion_tokens": 12,
        "total_tokens": entry["prompt_tokens"] + 12,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    assert timings["cache_n"] == 0 and timings["prompt_n"] == entry["prompt_tokens"]
    assert timings["prompt_ms"] == pytest.approx(entry["prefill_ms"], abs=1e-3)
    assert timings["prompt_ms"] == pytest.approx(entry["prompt_tokens"] * 1.2, abs=1e-3)
    assert timings["prompt_per_token_ms"] == pytest.approx(1.2)
    assert timings["predicted_n"] == 12
    # Decode: 11 gaps at 400 tokens/s, the span the log's schedule stamps give, which the real
    # sends can only trail.
    assert timings["predicted_ms"] == pytest.approx(11 / 400 * 1000, abs=1e-3)
    scheduled = entry["scheduled_last_token_at"] - entry["scheduled_first_token_at"]
    assert timings["predicted_ms"] == pytest.approx(scheduled * 1000, abs=1e-3)
    assert entry["first_token_at"] >= entry["scheduled_first_token_at"]
    assert entry["last_token_at"] >= entry["scheduled_last_token_at"]
    assert entry["first_token_at"] - entry["received_at"] >= timings["prompt_ms"] / 1000


async def test_llamacpp_timings_without_usage_ride_the_finish_chunk_and_the_body() -> None:
    async with running(**LLAMACPP) as demo:
        chunks = await stream_chunks(demo.base_url, {"model": "m", "messages": USER})
        status, whole = await post(
            f"{demo.base_url}/chat/completions", {"model": "m", "messages": USER}
        )
    finish = chunks[-2]
    assert finish["choices"][0]["finish_reason"] == "stop" and "usage" not in finish
    assert list(finish["timings"]) == TIMINGS_KEYS
    assert status == 200 and list(whole["timings"]) == TIMINGS_KEYS
    assert whole["timings"]["cache_n"] == 0  # the instant preset's cache is off
    assert whole["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}


async def test_llama_cpp_python_sends_no_usage_in_a_stream_and_no_timings() -> None:
    async with running(server="llama-cpp-python") as demo:
        body = {"model": "m", "messages": USER, "stream_options": {"include_usage": True}}
        chunks = await stream_chunks(demo.base_url, body)
        status, whole = await post(
            f"{demo.base_url}/chat/completions", {"model": "m", "messages": USER}
        )
    assert len(deltas(chunks, "content")) == 12
    assert all("usage" not in c and "timings" not in c for c in chunks[:-1])
    assert status == 200 and "timings" not in whole
    assert set(whole["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}


async def test_vllm_and_openai_usage_shapes() -> None:
    body = {"model": "m", "messages": USER, "stream_options": {"include_usage": True}}
    async with running(server="vllm") as demo:
        vllm = (await stream_chunks(demo.base_url, body))[-2]
    async with running(server="openai") as demo:
        openai = (await stream_chunks(demo.base_url, body))[-2]
    assert vllm["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}
    assert "timings" not in vllm and "timings" not in openai
    assert openai["usage"]["prompt_tokens_details"] == {"cached_tokens": 0, "audio_tokens": 0}
    assert openai["usage"]["completion_tokens_details"] == {
        "reasoning_tokens": 0,
        "audio_tokens": 0,
        "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0,
    }


def test_each_preset_plays_the_server_it_was_measured_on() -> None:
    assert {name: model.server for name, model in PRESETS.items()} == {
        "cpu-small": "llamacpp",
        "seed-qwen7b": "vllm",
        "h100-70b": "vllm",
        "instant": "openai",
    }
    assert latency_model("cpu-small", {"server": "llama-cpp-python"}).server == "llama-cpp-python"
    with pytest.raises(ValueError, match="demo server = 'ollama': expected one of llamacpp"):
        latency_model("cpu-small", {"server": "ollama"})
    # The config file's check knows the same names.
    assert KNOWN_DEMO_SERVERS == SERVER_DIALECTS


async def test_config_file_picks_the_server_and_switches_the_cache_off(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[demo]\npreset = "cpu-small"\nserver = "vllm"\nprefix_cache = false\n'
        "decode_tokens_per_s = 2000\n",
        encoding="utf-8",
    )
    config = load_config(ConfigFlags(), env={}, cwd=tmp_path)
    demo = DemoServer(latency_model(config.demo_preset, config.demo_overrides))
    await demo.start()
    try:
        for _ in range(2):
            status, reply = await post(
                f"{demo.base_url}/chat/completions", {"model": "m", "messages": USER}
            )
            assert status == 200 and "timings" not in reply  # vLLM sends none
    finally:
        await demo.stop()
    assert [e["server"] for e in demo.requests] == ["vllm", "vllm"]
    repeat = demo.requests[1]
    assert repeat["cached_prompt_tokens"] == 0  # the same prompt again, and nothing cached
    assert repeat["prefill_ms"] == pytest.approx(repeat["prompt_tokens"] * 1.2)
    assert reply["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}
    (tmp_path / "config.toml").write_text('[demo]\nserver = "ollama"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"demo.server = \"ollama\": expected one of llamacpp"):
        load_config(ConfigFlags(), env={}, cwd=tmp_path)
