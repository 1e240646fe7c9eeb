"""The demo endpoint over real HTTP on loopback: SSE format, JSON, models, lengths, the log."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import httpx2
import pytest
from openai import AsyncOpenAI

from tui.demo import DemoServer, start_demo_in_thread
from tui.demo.latency_model import latency_model

INSTANT = latency_model("instant")
USER = [{"role": "user", "content": "hello"}]


@pytest.fixture
async def client(server: DemoServer) -> AsyncIterator[AsyncOpenAI]:
    sdk = AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    yield sdk
    await sdk.close()


async def sse_events(url: str, body: dict) -> list[str]:
    """The raw `data:` payloads of one streamed response, in order."""
    async with (
        httpx2.AsyncClient() as http,
        http.stream("POST", f"{url}/chat/completions", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        text = (await response.aread()).decode("utf-8")
    assert text.endswith("\n\n")
    events = text.split("\n\n")[:-1]
    assert all(event.startswith("data: ") for event in events)
    return [event.removeprefix("data: ") for event in events]


async def test_stream_has_role_chunk_one_token_per_chunk_finish_usage_and_done(
    server: DemoServer,
) -> None:
    body = {
        "model": "any-name",
        "messages": USER,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    events = await sse_events(server.base_url, body)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    for chunk in chunks:
        assert chunk["object"] == "chat.completion.chunk"
        assert chunk["model"] == "any-name"
        assert chunk["id"] == chunks[0]["id"]
        assert isinstance(chunk["created"], int)
    assert chunks[0]["choices"] == [
        {
            "index": 0,
            "delta": {"role": "assistant", "content": ""},
            "logprobs": None,
            "finish_reason": None,
        }
    ]
    content = chunks[1:-2]
    # The default reply ends at a sentence within the preset's reply_tokens.
    assert 0 < len(content) <= INSTANT.reply_tokens
    assert content[-1]["choices"][0]["delta"]["content"].endswith((".", "。"))
    assert all(c["choices"][0]["delta"]["content"] for c in content)
    assert chunks[-2]["choices"][0]["delta"] == {}
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    usage_chunk = chunks[-1]
    assert usage_chunk["choices"] == []
    usage = usage_chunk["usage"]
    assert usage["completion_tokens"] == len(content)
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["prompt_tokens"] == server.requests[0]["prompt_tokens"] > 0


async def test_no_usage_chunk_unless_asked(server: DemoServer) -> None:
    events = await sse_events(server.base_url, {"model": "m", "messages": USER, "stream": True})
    chunks = [json.loads(e) for e in events[:-1]]
    assert events[-1] == "[DONE]"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert all("usage" not in c for c in chunks)


async def test_sdk_stream_and_non_stream(client: AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(
        model="m", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    parts, usage = [], None
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            parts.append(chunk.choices[0].delta.content)
        usage = chunk.usage or usage
    assert usage is not None and usage.completion_tokens == len(parts)
    streamed = "".join(parts)
    assert streamed.startswith("## firsttoken demo reply (simulated)")
    assert "streaming" in streamed and "```python" in streamed and "首个令牌延迟" in streamed

    whole = await client.chat.completions.create(model="m", messages=USER)
    assert whole.object == "chat.completion"
    assert whole.choices[0].finish_reason == "stop"
    assert whole.choices[0].message.role == "assistant"
    assert whole.usage is not None
    assert 0 < whole.usage.completion_tokens <= INSTANT.reply_tokens
    assert "not streaming" in (whole.choices[0].message.content or "")


async def test_reply_reports_what_it_received(client: AsyncOpenAI, server: DemoServer) -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "three"},
    ]
    reply = await client.chat.completions.create(model="demo-7b-chat", messages=messages)
    text = reply.choices[0].message.content or ""
    entry = server.requests[0]
    assert "**4 messages** (1 assistant, 1 system, 2 user)" in text
    assert f"**{entry['prompt_tokens']} prompt tokens**" in text
    assert "`demo-7b-chat`" in text and "simulated" in text


async def test_models_list(client: AsyncOpenAI) -> None:
    ids = [model.id async for model in client.models.list()]
    assert ids == [
        "firsttoken-demo",
        "demo-instant",
        "demo-cpu-small",  # one model per latency preset: a race of simulated speeds
        "demo-seed-qwen7b",
        "demo-h100-70b",
        "firsttoken-demo-reasoning",
        "firsttoken-demo-reasoning-openrouter",
        "firsttoken-demo-openai-reasoning",
    ]


async def test_reply_n_tokens_gives_exactly_n(client: AsyncOpenAI) -> None:
    for n in (1, 7, 500):
        messages = [{"role": "user", "content": f"Please Reply {n} Tokens, thanks"}]
        reply = await client.chat.completions.create(model="m", messages=messages)
        assert reply.usage is not None and reply.usage.completion_tokens == n
        assert reply.choices[0].finish_reason == "stop"


async def test_max_tokens_caps_with_finish_reason_length(client: AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(
        model="m", messages=USER, stream=True, max_tokens=10
    )
    contents, finish = 0, None
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            contents += 1
        if chunk.choices and chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
    assert (contents, finish) == (10, "length")
    # A cap above the asked length changes nothing.
    messages = [{"role": "user", "content": "reply 5 tokens"}]
    reply = await client.chat.completions.create(model="m", messages=messages, max_tokens=50)
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.completion_tokens == 5


async def test_default_reply_ends_at_a_sentence_and_a_cut_one_says_length(
    client: AsyncOpenAI,
) -> None:
    natural = await client.chat.completions.create(model="m", messages=USER)
    text = natural.choices[0].message.content or ""
    assert natural.choices[0].finish_reason == "stop"
    assert text.endswith((".", "。")) and text.count("```") == 2
    assert natural.usage is not None
    length = natural.usage.completion_tokens
    assert length <= INSTANT.reply_tokens
    for key in ("max_tokens", "max_completion_tokens"):
        cut = await client.chat.completions.create(model="m", messages=USER, **{key: length - 1})
        assert cut.choices[0].finish_reason == "length"
        assert cut.usage is not None and cut.usage.completion_tokens == length - 1
        enough = await client.chat.completions.create(model="m", messages=USER, **{key: length})
        assert enough.choices[0].finish_reason == "stop"
        assert enough.choices[0].message.content == text


async def test_same_request_same_text(client: AsyncOpenAI) -> None:
    messages = [{"role": "user", "content": "reply 300 tokens about latency"}]
    first = await client.chat.completions.create(model="m", messages=messages)
    second = await client.chat.completions.create(model="m", messages=messages)
    assert first.choices[0].message.content == second.choices[0].message.content


async def test_cjk_never_split_across_chunks(server: DemoServer) -> None:
    body = {"model": "m", "messages": USER, "stream": True}
    events = await sse_events(server.base_url, body)
    contents = [json.loads(e)["choices"][0]["delta"].get("content") for e in events[1:-2]]
    cjk = [c for c in contents if any("\u4e00" <= ch <= "\u9fff" for ch in c)]
    assert "首" in [c.strip() for c in cjk]
    assert all(len(c.strip()) == 1 for c in cjk)  # one CJK character per token


async def test_keep_alive_reuses_one_connection(server: DemoServer) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        for stream in (True, False, True):
            body = json.dumps({"model": "m", "messages": USER, "stream": stream}).encode()
            writer.write(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%b"
                % (len(body), body)
            )
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 OK\r\n")
            if stream:
                assert b"Transfer-Encoding: chunked" in head
                payload = await reader.readuntil(b"0\r\n\r\n")
                assert payload.endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n")
            else:
                length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                json.loads(await reader.readexactly(length))
            assert b"Connection: close" not in head
    finally:
        writer.close()
    assert len(server.requests) == 3


async def test_sdk_client_reuses_connection(client: AsyncOpenAI, server: DemoServer) -> None:
    for _ in range(3):
        await client.chat.completions.create(model="m", messages=USER)
        stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
        async for _chunk in stream:
            pass
    assert len(server._connections) == 1  # one pooled keep-alive connection served all six


async def test_log_timestamps_follow_the_latency_model(tmp_path: Path) -> None:
    model = replace(
        latency_model("cpu-small"),
        rtt_ms=2,
        queue_ms=3,
        decode_tokens_per_s=2000,
        prefix_cache=False,  # the same prompt twice: both must pay the full prefill here
    )
    log = tmp_path / "requests.jsonl"
    demo = DemoServer(model, request_log=log)
    await demo.start()
    sdk = AsyncOpenAI(base_url=demo.base_url, api_key="x", max_retries=0)
    try:
        messages = [{"role": "user", "content": "latency " * 40 + "reply 400 tokens"}]
        stream = await sdk.chat.completions.create(model="m", messages=messages, stream=True)
        received = 0
        async for chunk in stream:
            received += bool(chunk.choices and chunk.choices[0].delta.content)
        await sdk.chat.completions.create(model="m", messages=messages)
    finally:
        await sdk.close()
        await demo.stop()
    assert received == 400
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert lines == demo.requests
    for entry in lines:
        stamps = [entry[k] for k in ("received_at", "first_byte_at", "first_token_at")]
        stamps += [entry["last_token_at"], entry["done_at"]]
        assert stamps == sorted(stamps)
        assert entry["prefill_ms"] == pytest.approx(entry["prompt_tokens"] * 1.2)
        ttft_s = (2 + 3 + entry["prefill_ms"]) / 1000
        assert entry["first_token_at"] - entry["received_at"] >= ttft_s
        # Token i is due at first + i/rate: the last one cannot come before its deadline.
        assert entry["last_token_at"] - entry["received_at"] >= ttft_s + 399 / 2000
        assert entry["output_tokens"] == 400
        assert entry["message_count"] == 1 and entry["messages"] == messages
    streamed = lines[0]
    assert streamed["stream"] and streamed["first_byte_at"] - streamed["received_at"] >= 0.005
    assert streamed["first_byte_at"] < streamed["first_token_at"]  # headers precede prefill's end


async def test_log_splits_the_servers_ttft_into_its_simulated_parts() -> None:
    model = replace(latency_model("cpu-small"), rtt_ms=2, queue_ms=3, jitter_ms=4, seed=7)
    demo = DemoServer(replace(model, decode_tokens_per_s=2000))
    await demo.start()
    sdk = AsyncOpenAI(base_url=demo.base_url, api_key="x", max_retries=0)
    try:
        messages = [{"role": "user", "content": "split " * 50 + "reply 3 tokens"}]
        async for _chunk in await sdk.chat.completions.create(
            model="m", messages=messages, stream=True
        ):
            pass
        await sdk.chat.completions.create(model="m", messages=messages)
    finally:
        await sdk.close()
        await demo.stop()
    for entry in demo.requests:
        assert entry["server"] == "llamacpp"
        assert (entry["rtt_ms"], entry["queue_ms"]) == (2, 3)
        assert 0 <= entry["jitter_ms"] <= 4
        uncached = entry["prompt_tokens"] - entry["cached_prompt_tokens"]
        assert entry["prefill_ms"] == pytest.approx(uncached * 1.2)
        parts = entry["rtt_ms"] + entry["queue_ms"] + entry["jitter_ms"] + entry["prefill_ms"]
        assert entry["simulated_ttft_ms"] == pytest.approx(parts)
        # Received, head sent, first and last token sent: in order, and no token before its time.
        stamps = [entry[k] for k in ("received_at", "first_byte_at", "first_token_at")]
        assert stamps == sorted(stamps) and entry["first_token_at"] <= entry["last_token_at"]
        assert entry["first_token_at"] - entry["received_at"] >= parts / 1000
        assert entry["scheduled_first_token_at"] - entry["received_at"] == pytest.approx(
            parts / 1000
        )
        assert entry["first_answer_token_at"] == entry["first_token_at"]  # no thinking here
    streamed, whole = demo.requests
    assert whole["cached_prompt_tokens"] == whole["prompt_tokens"] - 1  # the repeat was cached
    assert streamed["first_byte_at"] < streamed["first_token_at"]  # the head before prefill


async def test_demo_requests_endpoint(server: DemoServer, client: AsyncOpenAI) -> None:
    await client.chat.completions.create(model="m", messages=USER, max_tokens=3, temperature=0.1)
    async with httpx2.AsyncClient() as http:
        log = (await http.get(f"{server.root_url}/demo/requests")).json()
    assert len(log) == 1
    assert log[0]["max_tokens"] == 3 and log[0]["temperature"] == 0.1
    assert log[0]["fault"] is None and log[0]["path"] == "/v1/chat/completions"


async def test_client_disconnect_mid_stream_is_quiet(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    demo = DemoServer(replace(INSTANT, decode_tokens_per_s=200))
    await demo.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", demo.port)
        body = json.dumps(
            {"messages": [{"role": "user", "content": "reply 400 tokens"}], "stream": True}
        )
        writer.write(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%b"
            % (len(body), body.encode())
        )
        await reader.readuntil(b'"content":"')
        writer.transport.abort()  # a reset, as a killed client would cause
        for _ in range(200):
            if demo.requests[0]["done_at"] is not None:
                break
            await asyncio.sleep(0.01)
        entry = demo.requests[0]
        assert entry["client_disconnected"] is True
        assert 0 < entry["output_tokens"] < 400
        # The server keeps serving.
        sdk = AsyncOpenAI(base_url=demo.base_url, api_key="x", max_retries=0)
        await sdk.chat.completions.create(model="m", messages=USER)
        await sdk.close()
    finally:
        await demo.stop()
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]


def test_thread_server_is_a_context_manager() -> None:
    import openai

    with start_demo_in_thread(INSTANT) as demo:
        assert demo.base_url == f"http://127.0.0.1:{demo.port}/v1"
        assert demo.root_url == f"http://127.0.0.1:{demo.port}"
        sdk = openai.OpenAI(base_url=demo.base_url, api_key="x", max_retries=0)
        reply = sdk.chat.completions.create(model="m", messages=USER)
        sdk.close()
        assert reply.usage is not None
        snapshot = demo.requests
        assert len(snapshot) == 1 and snapshot[0]["done_at"] is not None
        snapshot[0]["model"] = "changed"  # a copy: the server's log is untouched
        assert demo.requests[0]["model"] == "m"
    demo.stop()  # idempotent
    assert len(demo.requests) == 1
    with pytest.raises(openai.APIConnectionError):
        openai.OpenAI(base_url=demo.base_url, api_key="x", max_retries=0).models.list()


async def test_a_preset_model_id_gets_that_presets_latency() -> None:
    """`demo-<preset>` is answered at that preset's speed, whatever the server's own: on an
    instant server, demo-cpu-small's prefill (1.2 ms a prompt token) and round trip show."""
    demo = DemoServer(latency_model("instant"))
    await demo.start()
    try:
        client = AsyncOpenAI(base_url=demo.base_url, api_key="demo", max_retries=0)
        for model in ("demo-cpu-small", "firsttoken-demo"):
            await client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": "hi, reply 3 tokens"}]
            )
        slow, own = demo.requests
        assert slow["preset"] == "cpu-small" and own["preset"] == "instant"
        assert slow["simulated_ttft_ms"] == 1.0 + 1.2 * slow["prompt_tokens"]
        assert own["simulated_ttft_ms"] == 0.0
        await client.close()
    finally:
        await demo.stop()
