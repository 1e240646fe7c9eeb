"""Every fault spec of the demo endpoint (/fault/<spec>/v1/...), seen through the openai SDK."""

from __future__ import annotations

import json
from dataclasses import replace

import httpx2
import openai
import pytest
from openai import AsyncOpenAI

from tui.demo import DemoServer
from tui.demo.latency_model import latency_model

INSTANT = latency_model("instant")
USER = [{"role": "user", "content": "hello"}]


def sdk(server: DemoServer, spec: str, timeout: float = 10.0) -> AsyncOpenAI:
    base_url = f"{server.root_url}/fault/{spec}/v1"
    return AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=timeout)


async def plain_contents(server: DemoServer) -> list[str]:
    """The reply's tokens without a fault: what a fault that lets the reply finish must send."""
    client = AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    contents, _ = await stream_contents(client)
    await client.close()
    assert 0 < len(contents) <= INSTANT.reply_tokens
    return contents


async def stream_contents(client: AsyncOpenAI, **kw: object) -> tuple[list[str], list]:
    """(contents, all chunks) of one streamed request; raises what the SDK raises mid-way."""
    stream = await client.chat.completions.create(model="m", messages=USER, stream=True, **kw)
    contents, chunks = [], []
    async for chunk in stream:
        chunks.append(chunk)
        if chunk.choices and chunk.choices[0].delta.content:
            contents.append(chunk.choices[0].delta.content)
    return contents, chunks


@pytest.mark.parametrize(
    ("spec", "error", "code"),
    [
        ("401", openai.AuthenticationError, "invalid_api_key"),
        ("403", openai.PermissionDeniedError, "forbidden"),
        ("429", openai.RateLimitError, "rate_limit_exceeded"),
        ("500", openai.InternalServerError, "internal_error"),
        ("context", openai.BadRequestError, "context_length_exceeded"),
    ],
)
async def test_status_faults_answer_openai_shaped_errors(
    server: DemoServer, spec: str, error: type[openai.APIStatusError], code: str
) -> None:
    client = sdk(server, spec)
    for stream in (True, False):
        with pytest.raises(error) as caught:
            await client.chat.completions.create(model="m", messages=USER, stream=stream)
        body = caught.value.body
        assert isinstance(body, dict) and body["code"] == code
        assert body["message"] and body["type"]
        if spec == "429":
            assert caught.value.response.headers["retry-after"] == "1"
    await client.close()
    assert [e["fault"] for e in server.requests] == [spec, spec]
    assert all(e["status"] == caught.value.status_code for e in server.requests)


async def test_counted_faults_fail_first_n_then_serve(server: DemoServer) -> None:
    plain = await plain_contents(server)
    client = sdk(server, "429x2")
    for _ in range(2):
        with pytest.raises(openai.RateLimitError):
            await client.chat.completions.create(model="m", messages=USER)
    reply = await client.chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].finish_reason == "stop"
    await client.close()

    # Counters are per spec string: 503x1 and 503x2 count separately.
    one, two = sdk(server, "503x1"), sdk(server, "503x2")
    with pytest.raises(openai.InternalServerError) as caught:
        await one.chat.completions.create(model="m", messages=USER)
    assert caught.value.status_code == 503
    contents, _ = await stream_contents(one)
    assert contents == plain
    with pytest.raises(openai.InternalServerError):
        await two.chat.completions.create(model="m", messages=USER)
    await one.close()
    await two.close()
    assert [e["status"] for e in server.requests] == [200, 429, 429, 200, 503, 200, 503]


async def test_stall_pauses_after_five_tokens_then_finishes(server: DemoServer) -> None:
    client = sdk(server, "stall-300")
    contents, chunks = await stream_contents(client)
    await client.close()
    assert contents == await plain_contents(server)
    assert chunks[-1].choices[0].finish_reason == "stop"
    entry = server.requests[0]
    # The instant model would send everything at once; the pause shows in the server's stamps.
    assert entry["last_token_at"] - entry["first_token_at"] >= 0.3


async def test_early_sends_five_tokens_then_closes(server: DemoServer) -> None:
    client = sdk(server, "early")
    stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
    contents, finishes = [], []
    with pytest.raises((httpx2.RemoteProtocolError, openai.APIConnectionError)):
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                contents.append(chunk.choices[0].delta.content)
            if chunk.choices and chunk.choices[0].finish_reason:
                finishes.append(chunk.choices[0].finish_reason)
    assert len(contents) == 5 and finishes == []
    await client.close()
    assert server.requests[0]["output_tokens"] == 5


async def test_badjson_sends_three_tokens_then_garbage(server: DemoServer) -> None:
    async with (
        httpx2.AsyncClient() as http,
        http.stream(
            "POST",
            f"{server.root_url}/fault/badjson/v1/chat/completions",
            json={"model": "m", "messages": USER, "stream": True},
        ) as response,
    ):
        text = (await response.aread()).decode()
    events = [e.removeprefix("data: ") for e in text.split("\n\n")[:-1]]
    assert len(events) == 1 + 3 + 2  # role, three tokens, the bad line, [DONE]
    assert events[4] == "{not json"
    for event in events[:4]:
        json.loads(event)
    client = sdk(server, "badjson")
    with pytest.raises(json.JSONDecodeError):
        await stream_contents(client)
    await client.close()


async def test_empty_sends_headers_then_closes(server: DemoServer) -> None:
    async with httpx2.AsyncClient() as http:
        request = http.build_request(
            "POST",
            f"{server.root_url}/fault/empty/v1/chat/completions",
            json={"model": "m", "messages": USER, "stream": True},
        )
        response = await http.send(request, stream=True)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        with pytest.raises(httpx2.RemoteProtocolError):
            await response.aread()
        await response.aclose()
    entry = server.requests[0]
    assert entry["first_byte_at"] is not None and entry["first_token_at"] is None


async def test_nousage_ignores_include_usage(server: DemoServer) -> None:
    client = sdk(server, "nousage")
    contents, chunks = await stream_contents(client, stream_options={"include_usage": True})
    await client.close()
    assert contents == await plain_contents(server)
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(chunk.usage is None for chunk in chunks)


async def test_hang_never_answers(server: DemoServer) -> None:
    client = sdk(server, "hang", timeout=0.3)
    with pytest.raises(openai.APITimeoutError):
        await client.chat.completions.create(model="m", messages=USER, stream=True)
    await client.close()
    assert server.requests[0]["first_byte_at"] is None


async def test_drop_closes_without_response(server: DemoServer) -> None:
    client = sdk(server, "drop")
    with pytest.raises(openai.APIConnectionError):
        await client.chat.completions.create(model="m", messages=USER)
    await client.close()
    entry = server.requests[0]
    assert entry["first_byte_at"] is None and entry["done_at"] is not None


async def test_status_faults_also_apply_to_models(server: DemoServer) -> None:
    client = sdk(server, "401")
    with pytest.raises(openai.AuthenticationError):
        await client.models.list()
    await client.close()
    ok = sdk(server, "nousage")  # stream-shape faults leave /models alone
    ids = [m.id async for m in ok.models.list()]
    assert ids[:2] == ["firsttoken-demo", "demo-instant"]
    await ok.close()


async def test_unknown_fault_spec_is_404(server: DemoServer) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            f"{server.root_url}/fault/teapot/v1/chat/completions", json={"messages": USER}
        )
    assert response.status_code == 404
    assert "429x&lt;N&gt;" in response.text or "429x<N>" in response.text


async def test_fault_timings_keep_the_latency_model(server: DemoServer) -> None:
    slow = DemoServer(replace(INSTANT, rtt_ms=20))
    await slow.start()
    client = sdk(slow, "500")
    with pytest.raises(openai.InternalServerError):
        await client.chat.completions.create(model="m", messages=USER)
    await client.close()
    await slow.stop()
    entry = slow.requests[0]
    assert entry["first_byte_at"] - entry["received_at"] >= 0.02  # an error still costs the RTT


async def test_pause_holds_the_reply_mid_stream_then_finishes(server: DemoServer) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "reply 40 tokens"}]}
    async with httpx2.AsyncClient() as http:
        for spec in ("pause-300", "pause-100x3"):
            response = await http.post(
                f"{server.root_url}/fault/{spec}/v1/chat/completions", json={**body, "stream": True}
            )
            events = [e.removeprefix("data: ") for e in response.text.split("\n\n")[:-1]]
            assert events[-1] == "[DONE]"
            assert json.loads(events[-2])["choices"][0]["finish_reason"] == "stop"
            assert len(events) == 1 + 40 + 2  # role, every token, finish, [DONE]
    single, triple = server.requests
    assert [p["after_tokens"] for p in single["pauses"]] == [20]  # mid-reply
    assert [p["after_tokens"] for p in triple["pauses"]] == [10, 20, 30]
    for entry, ms in ((single, 300), (triple, 100)):
        assert entry["output_tokens"] == 40 and entry["finish_reason"] == "stop"
        for pause in entry["pauses"]:
            assert pause["pause_ms"] == ms
            # The server's own send stamps: the token after the pause went out `ms` later.
            assert pause["resumed_at"] - pause["paused_at"] >= ms / 1000
            assert entry["first_token_at"] <= pause["paused_at"] < pause["resumed_at"]
            assert pause["resumed_at"] <= entry["last_token_at"]


async def test_pause_delays_a_non_streamed_body_by_every_pause(server: DemoServer) -> None:
    client = sdk(server, "pause-100x2")
    reply = await client.chat.completions.create(model="m", messages=USER)
    await client.close()
    assert reply.choices[0].finish_reason == "stop"
    entry = server.requests[0]
    assert entry["first_byte_at"] - entry["received_at"] >= 0.2


async def test_buffered_sends_the_whole_stream_when_its_last_token_is_due() -> None:
    # Llama.cpp's dialect: its timings say what the server did, the stamps what the client got.
    demo = DemoServer(replace(INSTANT, decode_tokens_per_s=100.0, server="llamacpp"))
    await demo.start()
    try:
        async with httpx2.AsyncClient() as http:
            response = await http.post(
                f"{demo.root_url}/fault/buffered/v1/chat/completions",
                json={"messages": [{"role": "user", "content": "reply 20 tokens"}], "stream": True},
            )
    finally:
        await demo.stop()
    events = [e.removeprefix("data: ") for e in response.text.split("\n\n")[:-1]]
    assert response.headers["content-type"].startswith("text/event-stream")
    assert len(events) == 1 + 20 + 2 and events[-1] == "[DONE]"
    timings = json.loads(events[-2])["timings"]
    assert timings["predicted_n"] == 20 and timings["predicted_ms"] == pytest.approx(190)
    entry = demo.requests[0]
    # One write: every token's real send time is the last one's due time or later.
    assert entry["first_token_at"] == entry["last_token_at"]
    assert entry["first_token_at"] >= entry["scheduled_last_token_at"]
    assert entry["scheduled_last_token_at"] - entry["scheduled_first_token_at"] == pytest.approx(
        0.19
    )
    assert entry["first_byte_at"] < entry["first_token_at"]  # the head went out on time
    assert entry["first_token_at"] - entry["received_at"] >= 0.19


def test_pause_specs_parse_and_spread_their_pauses() -> None:
    from tui.demo.faults import parse_fault

    fault = parse_fault("pause-250x4")
    assert fault is not None and (fault.pause_ms, fault.pauses) == (250, 4)
    assert fault.pause_points(100) == [(20, 0.25), (40, 0.25), (60, 0.25), (80, 0.25)]
    assert parse_fault("pause-250") == replace(fault, spec="pause-250", pauses=1)
    assert parse_fault("pause-250x0") is None and parse_fault("pause-x2") is None
    assert parse_fault("buffered") is not None
