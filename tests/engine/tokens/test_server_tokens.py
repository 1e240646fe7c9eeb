"""Exact prompt counts from the server's own tokenizer, over real HTTP to the demo endpoint
playing each server: the probe, what is remembered across runs, the counts against the server's
`usage`, the trimmer deciding with them, and the calibration kept per model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from helpers.client import closed_port, collect, make_client, make_request

from tui.demo import DemoServer
from tui.demo.latency_model import latency_model
from tui.engine.chat.client import ChatClient, ClientError, server_root
from tui.engine.chat.request_builder import RequestSettings, build_request
from tui.engine.tokens.calibration import CalibrationFile
from tui.engine.tokens.counter import TokenCounter
from tui.engine.tokens.server_counts import (
    ESTIMATE,
    LLAMA_CPP_PYTHON,
    LLAMACPP,
    NONE,
    SERVER,
    SERVER_TEXT,
    VLLM,
    ProbeFailed,
    ProbeMemory,
    ServerCounts,
    ServerTokenizer,
    might_exceed,
    usage_agrees,
)
from tui.engine.tokens.trim import TrimPolicy, trim

CHAT = [
    {"role": "system", "content": "You answer briefly, in plain words."},
    {"role": "user", "content": "Why does a long prompt take longer to answer?"},
    {"role": "assistant", "content": "Because the server reads every prompt token first."},
    {"role": "user", "content": "And what does a prefix cache change? reply 3 tokens"},
]


@asynccontextmanager
async def playing(server: str) -> AsyncIterator[DemoServer]:
    demo = DemoServer(latency_model("instant", {"server": server}))
    await demo.start()
    try:
        yield demo
    finally:
        await demo.stop()


class Counted:
    """A client's post_json that counts the requests it makes."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.calls: list[str] = []

    async def __call__(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(path)
        return await self.client.post_json(path, payload)


async def test_post_json_reaches_the_servers_root_and_names_failures() -> None:
    assert server_root("http://h:8080/v1") == "http://h:8080"
    assert server_root("http://h:1234/api/v0/") == "http://h:1234"
    async with playing("llamacpp") as demo:
        client = make_client(demo.base_url)
        try:
            answer = await client.post_json("/tokenize", {"content": "hello world"})
            assert isinstance(answer["tokens"], list) and len(answer["tokens"]) == 2
            with pytest.raises(ClientError) as missing:
                await client.post_json("/extras/tokenize/count", {"input": "x"})
            assert missing.value.kind == "not_found"
        finally:
            await client.aclose()
    client = make_client(f"http://127.0.0.1:{closed_port()}/v1")
    try:
        with pytest.raises(ClientError) as refused:
            await client.post_json("/tokenize", {"content": "x"})
        assert refused.value.kind == "connection"
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    ("server", "api"),
    [
        ("llamacpp", LLAMACPP),
        ("vllm", VLLM),
        ("llama-cpp-python", LLAMA_CPP_PYTHON),
        ("openai", NONE),
    ],
)
async def test_the_probe_finds_the_api_once_and_remembers_it(server: str, api: str) -> None:
    async with playing(server) as demo:
        client = make_client(demo.base_url)
        try:
            post = Counted(client)
            tokenizer = ServerTokenizer(post, demo.base_url, "m")
            assert tokenizer.known is None
            found = await tokenizer.api()
            assert found.api == api and post.calls
            asked = len(post.calls)
            assert (await tokenizer.api()).api == api and len(post.calls) == asked
            # A later run (a new tokenizer, the same state dir) asks nothing.
            again = Counted(client)
            later = ServerTokenizer(again, demo.base_url, "m")
            assert later.known == found and (await later.api()).api == api and not again.calls
            other_model = ServerTokenizer(again, demo.base_url, "another-model")
            assert other_model.known is None  # remembered per endpoint and model
        finally:
            await client.aclose()


async def test_an_unreachable_endpoint_is_not_remembered() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    client = make_client(url)
    try:
        tokenizer = ServerTokenizer(client.post_json, url, "m")
        with pytest.raises(ProbeFailed):
            await tokenizer.api()
        assert ProbeMemory().get(url, "m") is None
    finally:
        await client.aclose()


@pytest.mark.parametrize("server", ["llamacpp", "vllm"])
async def test_a_templated_count_is_the_servers_usage(server: str) -> None:
    async with playing(server) as demo:
        client = make_client(demo.base_url)
        try:
            tokenizer = ServerTokenizer(client.post_json, demo.base_url, "m")
            counted = await tokenizer.count_prompt(CHAT)
            _, finished = await collect(make_client(demo.base_url), make_request(messages=CHAT))
        finally:
            await client.aclose()
    assert counted == (finished.record.prompt_tokens_usage, SERVER)


async def test_llama_cpp_python_counts_texts_and_the_template_is_the_local_recipe() -> None:
    async with playing("llama-cpp-python") as demo:
        client = make_client(demo.base_url)
        try:
            tokenizer = ServerTokenizer(client.post_json, demo.base_url, "m")
            counted = await tokenizer.count_prompt(CHAT)
            await collect(make_client(demo.base_url), make_request(messages=CHAT))
        finally:
            await client.aclose()
        served = demo.requests[-1]["prompt_tokens"]
    assert counted is not None and counted[1] == SERVER_TEXT
    assert abs(counted[0] - served) <= 3 * len(CHAT)  # within the template's few per message


async def test_the_trimmer_decides_with_the_servers_counts_and_loads_no_vocabulary() -> None:
    long_chat = [CHAT[0]]
    for n in range(12):
        long_chat.append(
            {"role": "user", "content": f"question {n}: " + "why is prefill slow? " * 30 + "?"}
        )
        long_chat.append({"role": "assistant", "content": "Because of the prompt. " * 30 + "."})
    long_chat.append(CHAT[-1])
    local = TokenCounter("some-open-model")  # its vocabulary is not loaded yet
    async with playing("llamacpp") as demo:
        client = make_client(demo.base_url)
        try:
            tokenizer = ServerTokenizer(client.post_json, demo.base_url, "m")
            counts = ServerCounts(local)
            assert await tokenizer.learn(counts, long_chat)
            exact_total = await tokenizer.count_prompt(long_chat)
        finally:
            await client.aclose()
    assert local._vocabulary is None  # every message is known: nothing counted locally
    assert counts.prompt_source(long_chat) == SERVER_TEXT and counts.exact
    assert exact_total is not None
    per_message = counts.count_messages(long_chat)
    assert abs(per_message - exact_total[0]) <= 6  # the template's cost, measured once
    budget = per_message // 2
    result = trim(long_chat, budget, TrimPolicy(), counts)
    assert result.tokens_after <= budget and result.dropped
    settings = RequestSettings("m", 0.1, 64, budget, TrimPolicy())
    request = build_request(long_chat, settings, counts, trim_enabled=True, stream=True)
    assert request.prompt_tokens_source == SERVER_TEXT
    assert request.prompt_tokens_estimated == result.tokens_after
    assert local._vocabulary is None
    unknown = [*long_chat[:-1], {"role": "user", "content": "a new question"}]
    assert counts.prompt_source(unknown) == ESTIMATE  # one message counted locally


def test_might_exceed_bounds_tokens_by_bytes() -> None:
    messages = [{"role": "user", "content": "x" * 100}]
    assert not might_exceed(messages, budget=200, framing=5)
    assert might_exceed(messages, budget=100, framing=5)
    assert might_exceed([{"role": "user", "content": [{"type": "image_url"}]}], 10_000, 5)


async def test_a_non_streamed_usage_calibrates_and_the_ratio_is_kept_across_runs() -> None:
    # llama-cpp-python sends no usage in a stream: one non-streamed reply is what teaches the
    # local estimate how far off it is for this model, and the next run starts from it.
    model = "gemma-3-270m"
    counter = TokenCounter(model, persist=True)
    settings = RequestSettings(model, 0.1, 16, 6000, TrimPolicy())
    async with playing("llama-cpp-python") as demo:
        streamed = build_request(CHAT, settings, counter, trim_enabled=False, stream=True)
        await collect(make_client(demo.base_url, counter=counter), streamed)
        assert counter.calibration_samples == 0  # no usage in the stream
        whole = build_request(CHAT, settings, counter, trim_enabled=False, stream=False)
        _, finished = await collect(make_client(demo.base_url, counter=counter), whole)
    actual = finished.record.prompt_tokens_usage
    assert actual is not None and counter.calibration_samples == 1
    assert counter.ratio == pytest.approx(actual / whole.prompt_tokens_counted)
    later = TokenCounter(model, persist=True)
    assert later.calibration_samples == 1 and later.ratio == pytest.approx(counter.ratio)
    assert CalibrationFile().load("another-model") is None


async def test_a_total_is_exact_only_as_the_servers_templated_count_and_until_usage_disagrees() -> (
    None
):
    """llama.cpp templates the prompt it counts: its totals are exact. llama-cpp-python counts
    texts, the template's tokens are the local recipe's: an estimate, however exact its parts.
    And once the server's usage contradicts a count, usage wins: the counts are estimates again,
    corrected by what usage said, for that endpoint and model."""
    local = TokenCounter("some-open-model", persist=False)
    exact: dict[str, bool] = {}
    for server in ("llamacpp", "llama-cpp-python"):
        async with playing(server) as demo:
            client = make_client(demo.base_url)
            try:
                tokenizer = ServerTokenizer(client.post_json, demo.base_url, "m")
                counts = ServerCounts(local)
                assert await tokenizer.learn(counts, CHAT)
            finally:
                await client.aclose()
        exact[server] = counts.exact
        assert counts.known(CHAT)
    assert exact == {"llamacpp": True, "llama-cpp-python": False}

    templated = ServerCounts(local)
    templated.learn(CHAT, [10, 20, 30, 40], 3)
    templated.templated = True
    total = templated.count_messages(CHAT)
    templated.record_usage(total, total + 1)  # within a token or two: agrees
    assert templated.exact and templated.calibrated(total) == total
    templated.record_usage(total, total // 2)  # the template dropped half of it
    assert not templated.exact and templated.disagreed
    assert templated.calibrated(total) < total


def test_usage_agrees_within_a_couple_of_tokens_or_one_percent() -> None:
    assert usage_agrees(100, 102) and usage_agrees(10_000, 10_090)
    assert usage_agrees(8_898, 5_389) is False and usage_agrees(100, 104) is False
    assert usage_agrees(None, 5) is None and usage_agrees(5, None) is None
