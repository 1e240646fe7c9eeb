"""Reasoning model ids: thinking streamed before the answer, hidden thinking, OpenAI's refusals."""

from __future__ import annotations

import openai
import pytest
from helpers.demo_wire import deltas, post, running, stream_chunks
from openai import AsyncOpenAI

from tui.demo import DemoServer

USER = [{"role": "user", "content": "Why is the first token slow? reply 10 tokens"}]
RATE = 400.0  # tokens/s: each token has its own deadline on the schedule


async def test_reasoning_content_streams_first_then_the_answer() -> None:
    body = {
        "model": "firsttoken-demo-reasoning",
        "messages": USER,
        "stream_options": {"include_usage": True},
    }
    async with running(decode_tokens_per_s=RATE) as demo:
        chunks = await stream_chunks(demo.base_url, body)
        entry = demo.requests[0]
    thinking = deltas(chunks, "reasoning_content")
    answer = deltas(chunks, "content")
    assert len(thinking) > 20 and len(answer) == 10
    assert "".join(thinking).startswith("The user sent 1 message with")
    assert "".join(thinking).endswith(".")  # a whole thought, ending at a sentence
    # Every thinking delta comes before the first answer delta.
    kinds = [
        "thinking" if c["choices"][0]["delta"].get("reasoning_content") else "answer"
        for c in chunks[1:-3]
    ]
    assert kinds == ["thinking"] * len(thinking) + ["answer"] * 10
    usage = chunks[-2]["usage"]
    assert usage["completion_tokens"] == len(thinking) + 10
    assert usage["completion_tokens_details"]["reasoning_tokens"] == len(thinking)
    # The log: the first token is the first thought, and the answer is not due before the
    # whole thought was decoded.
    assert entry["reasoning_tokens"] == len(thinking)
    assert entry["output_tokens"] == len(thinking) + 10
    assert entry["first_token_at"] <= entry["first_answer_token_at"] <= entry["last_token_at"]
    assert entry["first_answer_token_at"] - entry["received_at"] >= len(thinking) / RATE


async def test_openrouter_reasoning_uses_its_own_field_and_delta_shape() -> None:
    body = {"model": "firsttoken-demo-reasoning-openrouter", "messages": USER}
    async with running() as demo:
        chunks = await stream_chunks(demo.base_url, body)
    first_thought = chunks[1]["choices"][0]["delta"]
    assert set(first_thought) == {"role", "content", "reasoning", "reasoning_details"}
    assert first_thought["content"] == "" and first_thought["reasoning"]
    assert deltas(chunks, "reasoning_content") == []
    assert deltas(chunks, "reasoning") and len(deltas(chunks, "content")) == 10


async def test_non_stream_bodies_carry_the_thinking_in_the_message() -> None:
    async with running() as demo:
        _, plain = await post(
            f"{demo.base_url}/chat/completions",
            {"model": "firsttoken-demo-reasoning", "messages": USER},
        )
        _, routed = await post(
            f"{demo.base_url}/chat/completions",
            {"model": "firsttoken-demo-reasoning-openrouter", "messages": USER},
        )
        _, again = await post(
            f"{demo.base_url}/chat/completions",
            {"model": "firsttoken-demo-reasoning", "messages": USER},
        )
    message = plain["choices"][0]["message"]
    assert message["reasoning_content"].startswith("The user sent 1 message")
    assert routed["choices"][0]["message"]["reasoning"] == message["reasoning_content"]
    assert again["choices"] == plain["choices"]  # deterministic, thinking included
    reasoning = plain["usage"]["completion_tokens_details"]["reasoning_tokens"]
    assert plain["usage"]["completion_tokens"] == reasoning + 10


async def test_think_n_tokens_and_the_limit_covers_thinking_and_answer() -> None:
    messages = [{"role": "user", "content": "think 30 tokens, then reply 10 tokens"}]
    body = {"model": "firsttoken-demo-reasoning", "messages": messages}
    async with running() as demo:
        whole = await stream_chunks(demo.base_url, body)
        capped = await stream_chunks(demo.base_url, {**body, "max_tokens": 35})
        thinking_only = await stream_chunks(demo.base_url, {**body, "max_tokens": 20})
    assert (len(deltas(whole, "reasoning_content")), len(deltas(whole, "content"))) == (30, 10)
    assert whole[-2]["choices"][0]["finish_reason"] == "stop"
    assert (len(deltas(capped, "reasoning_content")), len(deltas(capped, "content"))) == (30, 5)
    assert capped[-2]["choices"][0]["finish_reason"] == "length"
    assert len(deltas(thinking_only, "reasoning_content")) == 20
    assert deltas(thinking_only, "content") == []


MODEL = "firsttoken-demo-openai-reasoning"


@pytest.fixture
async def sdk(server: DemoServer):
    client = AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    yield client
    await client.close()


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (
            {"max_tokens": 64},
            {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this "
                "model. Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "unsupported_parameter",
            },
        ),
        (
            {"temperature": 0.1},
            {
                "message": "Unsupported value: 'temperature' does not support 0.1 with this "
                "model. Only the default (1) value is supported.",
                "type": "invalid_request_error",
                "param": "temperature",
                "code": "unsupported_value",
            },
        ),
    ],
)
async def test_openai_reasoning_model_refuses_like_openai(
    server: DemoServer, extra: dict, error: dict
) -> None:
    for stream in (False, True):
        status, answer = await post(
            f"{server.base_url}/chat/completions",
            {"model": MODEL, "messages": USER, "stream": stream, **extra},
        )
        assert (status, answer) == (400, {"error": error})
    assert [e["status"] for e in server.requests] == [400, 400]
    assert all(e["first_byte_at"] is not None for e in server.requests)


async def test_openai_reasoning_model_takes_max_completion_tokens_and_thinks_unseen(
    server: DemoServer, sdk: AsyncOpenAI
) -> None:
    with pytest.raises(openai.BadRequestError):
        await sdk.chat.completions.create(model=MODEL, messages=USER, max_tokens=20)
    reply = await sdk.chat.completions.create(
        model=MODEL, messages=USER, max_completion_tokens=500, temperature=1
    )
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.completion_tokens_details is not None
    hidden = reply.usage.completion_tokens_details.reasoning_tokens
    assert hidden and reply.usage.completion_tokens == hidden + 10
    assert "reasoning_content" not in reply.choices[0].message.model_dump()
    # A limit the thinking uses up leaves an empty answer, as OpenAI's models do.
    starved = await sdk.chat.completions.create(model=MODEL, messages=USER, max_completion_tokens=5)
    assert starved.choices[0].message.content == ""
    assert starved.choices[0].finish_reason == "length"


async def test_hidden_thinking_delays_the_first_visible_token() -> None:
    async with running(decode_tokens_per_s=RATE) as demo:
        chunks = await stream_chunks(
            demo.base_url,
            {"model": MODEL, "messages": USER, "stream_options": {"include_usage": True}},
        )
        entry = demo.requests[0]
    hidden = chunks[-2]["usage"]["completion_tokens_details"]["reasoning_tokens"]
    assert deltas(chunks, "reasoning_content") == [] and len(deltas(chunks, "content")) == 10
    assert entry["reasoning_tokens"] == hidden > 0
    assert entry["first_token_at"] - entry["received_at"] >= hidden / RATE
