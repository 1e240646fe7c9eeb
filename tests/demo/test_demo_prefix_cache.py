"""llama.cpp's prompt-prefix reuse in the demo endpoint, over real HTTP on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import openai
import pytest
from helpers.demo_wire import post, stream_chunks
from helpers.demo_wire import running as wire_running
from openai import AsyncOpenAI

from tui.demo import DemoServer, count_prompt_tokens
from tui.demo.latency_model import PRESETS, LatencyModel, latency_model

SYSTEM = {"role": "system", "content": "You answer briefly."}
FIRST = [SYSTEM, {"role": "user", "content": "cache " * 200 + "reply 2 tokens"}]
FOLLOW_UP = [
    *FIRST,
    {"role": "assistant", "content": "Sure thing."},
    {"role": "user", "content": "and again, reply 2 tokens"},
]
# No waiting, but a prefill cost per token the log still reports, and the cache on.
CACHING = latency_model("instant", {"prefill_ms_per_token": 0.5, "prefix_cache": True})


@asynccontextmanager
async def running(model: LatencyModel) -> AsyncIterator[tuple[DemoServer, AsyncOpenAI]]:
    demo = DemoServer(model)
    await demo.start()
    sdk = AsyncOpenAI(base_url=demo.base_url, api_key="x", max_retries=0)
    try:
        yield demo, sdk
    finally:
        await sdk.close()
        await demo.stop()


@pytest.fixture
async def caching() -> AsyncIterator[tuple[DemoServer, AsyncOpenAI]]:
    async with running(CACHING) as pair:
        yield pair


async def ask(sdk: AsyncOpenAI, messages: list[dict], stream: bool = True) -> None:
    if not stream:
        await sdk.chat.completions.create(model="m", messages=messages)
        return
    async for _chunk in await sdk.chat.completions.create(
        model="m", messages=messages, stream=True
    ):
        pass


def server_ttft_s(entry: dict) -> float:
    return entry["first_token_at"] - entry["received_at"]


async def test_identical_repeat_at_cpu_small_skips_the_prefill() -> None:
    async with running(latency_model("cpu-small", {"decode_tokens_per_s": 2000})) as (demo, sdk):
        await ask(sdk, FIRST)
        await ask(sdk, FIRST)
    first, second = demo.requests
    assert first["cached_prompt_tokens"] == 0 and first["prefill_ms"] > 0
    assert second["prompt_tokens"] == first["prompt_tokens"]
    # As llama.cpp does: all but the last prompt token come from the cache (that one is computed
    # again for the first reply token's logits).
    assert second["cached_prompt_tokens"] == second["prompt_tokens"] - 1 > 0
    assert second["prefill_ms"] == pytest.approx(1.2)
    # The server's own stamps: the repeat reaches its first token sooner.
    assert server_ttft_s(second) < server_ttft_s(first)


async def test_a_follow_up_pays_prefill_only_for_the_new_messages(caching) -> None:
    demo, sdk = caching
    await ask(sdk, FIRST)
    await ask(sdk, FOLLOW_UP, stream=False)
    _, follow_up = demo.requests
    cached = count_prompt_tokens("m", FIRST)
    assert follow_up["cached_prompt_tokens"] == cached
    assert 0 < cached < follow_up["prompt_tokens"]
    assert follow_up["prefill_ms"] == pytest.approx((follow_up["prompt_tokens"] - cached) * 0.5)
    assert follow_up["simulated_ttft_ms"] == pytest.approx(follow_up["prefill_ms"])


async def test_the_prefix_ends_at_the_first_changed_message(caching) -> None:
    demo, sdk = caching
    await ask(sdk, FOLLOW_UP)
    edited = [*FOLLOW_UP[:2], {"role": "assistant", "content": "Edited."}, FOLLOW_UP[3]]
    await ask(sdk, edited)
    new_system = [{"role": "system", "content": "You answer at length."}, *edited[1:]]
    await ask(sdk, new_system)
    _, after_edit, after_new_system = demo.requests
    assert after_edit["cached_prompt_tokens"] == count_prompt_tokens("m", FIRST)
    # Trimming or changing the first message invalidates the whole cache, as in llama.cpp.
    assert after_new_system["cached_prompt_tokens"] == 0
    assert after_new_system["prefill_ms"] == pytest.approx(after_new_system["prompt_tokens"] * 0.5)


async def test_a_refused_request_leaves_the_cache_alone(caching) -> None:
    demo, sdk = caching
    refused = AsyncOpenAI(base_url=f"{demo.root_url}/fault/401/v1", api_key="x", max_retries=0)
    try:
        with pytest.raises(openai.AuthenticationError):
            await ask(refused, FIRST)
    finally:
        await refused.close()
    await ask(sdk, FIRST)
    await ask(sdk, FIRST)
    rejected, first, repeat = demo.requests
    assert rejected["status"] == 401 and rejected["cached_prompt_tokens"] == 0
    assert first["cached_prompt_tokens"] == 0
    assert repeat["cached_prompt_tokens"] == repeat["prompt_tokens"]


async def test_without_prefix_cache_every_request_pays_the_full_prefill() -> None:
    model = latency_model("instant", {"prefill_ms_per_token": 0.5})
    async with running(model) as (demo, sdk):
        await ask(sdk, FIRST)
        await ask(sdk, FIRST)
    for entry in demo.requests:
        assert entry["cached_prompt_tokens"] == 0
        assert entry["prefill_ms"] == pytest.approx(entry["prompt_tokens"] * 0.5)


def test_only_the_llama_cpp_preset_caches_and_the_override_is_a_boolean() -> None:
    assert [name for name, model in PRESETS.items() if model.prefix_cache] == ["cpu-small"]
    assert latency_model("cpu-small", {"prefix_cache": False}).prefix_cache is False
    assert latency_model("h100-70b", {"prefix_cache": True}).prefix_cache is True
    with pytest.raises(ValueError, match="prefix_cache = 1: expected true or false"):
        latency_model("cpu-small", {"prefix_cache": 1})


async def template_ids(root_url: str, messages: list[dict]) -> list[int]:
    """The prompt's token ids by llama.cpp's own route: /apply-template, then /tokenize."""
    _, template = await post(f"{root_url}/apply-template", {"messages": messages})
    _, tokens = await post(f"{root_url}/tokenize", {"content": template["prompt"]})
    return list(tokens["tokens"])


def common_prefix(a: list[int], b: list[int]) -> int:
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


async def test_llamacpp_caches_tokens_and_reports_them_in_usage_and_timings() -> None:
    async with wire_running(server="llamacpp", prefill_ms_per_token=0.5, prefix_cache=True) as demo:
        first_ids = await template_ids(demo.root_url, FIRST)
        follow_ids = await template_ids(demo.root_url, FOLLOW_UP)
        body = {"model": "m", "stream_options": {"include_usage": True}}
        await stream_chunks(demo.base_url, {**body, "messages": FIRST})
        last = (await stream_chunks(demo.base_url, {**body, "messages": FOLLOW_UP}))[-2]
    first, follow_up = demo.requests
    # What llama.cpp's slot holds is the previous prompt: the follow-up shares its tokens up to
    # the generation prompt, where the assistant's reply now stands.
    shared = common_prefix(first_ids, follow_ids)
    assert 0 < shared < len(first_ids) < len(follow_ids)
    assert first["cached_prompt_tokens"] == 0
    assert follow_up["cached_prompt_tokens"] == shared
    assert last["usage"]["prompt_tokens"] == len(follow_ids) == follow_up["prompt_tokens"]
    assert last["usage"]["prompt_tokens_details"] == {"cached_tokens": shared}
    timings = last["timings"]
    assert (timings["cache_n"], timings["prompt_n"]) == (shared, len(follow_ids) - shared)
    # Prefill is charged for the uncached tokens only.
    assert timings["prompt_ms"] == pytest.approx((len(follow_ids) - shared) * 0.5, abs=1e-3)
    assert follow_up["prefill_ms"] == pytest.approx(timings["prompt_ms"], abs=1e-3)


async def test_vllm_caches_whole_16_token_blocks() -> None:
    async with wire_running(server="vllm", prefix_cache=True) as demo:
        for messages in (FIRST, FIRST, FOLLOW_UP):
            await post(f"{demo.base_url}/chat/completions", {"model": "m", "messages": messages})
    first, repeat, follow_up = demo.requests
    assert repeat["prompt_tokens"] == first["prompt_tokens"]
    # All but the last token are shared; the cache serves whole blocks of them.
    assert repeat["cached_prompt_tokens"] == (first["prompt_tokens"] - 1) // 16 * 16 > 0
    assert follow_up["cached_prompt_tokens"] % 16 == 0 and follow_up["cached_prompt_tokens"] > 0


async def test_openai_dialect_reports_its_message_cache_in_usage(caching) -> None:
    demo, sdk = caching
    await ask(sdk, FIRST)
    reply = await sdk.chat.completions.create(model="m", messages=FOLLOW_UP)
    assert reply.usage is not None and reply.usage.prompt_tokens_details is not None
    cached = demo.requests[1]["cached_prompt_tokens"]
    assert (
        reply.usage.prompt_tokens_details.cached_tokens == cached == count_prompt_tokens("m", FIRST)
    )
