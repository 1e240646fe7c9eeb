"""What a hostile or broken server sends cannot show the user's credentials, end a readable
reply, pass a cut compressed body as whole, or make the client hold a reply many times over.
Every case is bytes on a loopback socket (tests/helpers/raw_server.py) read by the real
ChatClient."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import zlib
from typing import Any

import pytest
from helpers.raw_server import RawServer, response

from tui.engine.chat import attempt as attempt_module
from tui.engine.chat import client as client_module
from tui.engine.chat.client import ChatClient, ClientError
from tui.engine.chat.events import Delta, Finished
from tui.engine.chat.request import ChatRequest
from tui.engine.metrics.record import RequestStatus

SSE_HEAD = "Content-Type: text/event-stream"
JSON_HEAD = "Content-Type: application/json"


def event(content: str | None = None, finish: str | None = None) -> bytes:
    delta = {} if content is None else {"content": content}
    body = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
    body["choices"][0]["finish_reason"] = finish
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def stream_of(*contents: str) -> bytes:
    return b"".join(event(c) for c in contents) + event(None, "stop") + b"data: [DONE]\n\n"


def ask(stream: bool = True) -> ChatRequest:
    return ChatRequest(
        [{"role": "user", "content": "hi"}], "m", stream=stream, temperature=0.1, max_tokens=64
    )


async def finished(base_url: str, *, stream: bool = True, api_key: str | None = None) -> Finished:
    client = ChatClient(
        base_url=base_url, api_key=api_key, timeout_s=20, chunk_timeout_ms=20_000, max_retries=0
    )
    try:
        events = [e async for e in client.stream(ask(stream))]
    finally:
        await client.aclose()
    last = events[-1]
    assert isinstance(last, Finished)
    return last


# -- credentials the client sent, echoed back ---------------------------------------------------


async def test_basic_credentials_echoed_in_an_error_body_are_masked_in_every_encoding() -> None:
    def echo(head: bytes, _body: bytes) -> list[bytes]:
        sent = next(line for line in head.split(b"\r\n") if line.lower().startswith(b"auth"))
        token = sent.split(b" ")[-1]
        said = b"rejected " + sent + b" decoded " + base64.b64decode(token)
        return [response("500 Internal Server Error", said, "Content-Type: text/plain")]

    async with RawServer(echo) as server:
        url = f"http://usr:pw-LEAK-4242@127.0.0.1:{server.port}/v1"
        done = await finished(url)
        sent = server.requests[0][0]
    assert b"Authorization: Basic " + base64.b64encode(b"usr:pw-LEAK-4242") in sent
    message = done.record.error_message or ""
    assert message.startswith("server error HTTP 500")
    assert "pw-LEAK-4242" not in message
    assert base64.b64encode(b"usr:pw-LEAK-4242").decode() not in message
    assert "…" in message  # the masked forms are shown in their place


async def test_a_secret_is_masked_before_the_message_is_shortened() -> None:
    secret = "SECRETVALUE123456"
    query = "pad=" + "p" * 110 + "&key=" + secret  # the line is cut at 160, inside the secret

    def echo(head: bytes, _body: bytes) -> list[bytes]:
        said = b'{"error": {"message": "bad request to /v1/chat/completions?' + query.encode()
        return [response("400 Bad Request", said + b'"}}', "Content-Type: application/json")]

    async with RawServer(echo) as server:
        done = await finished(f"{server.base_url}?{query}", api_key="sk-test-0123456789abcdef")
    message = done.record.error_message or ""
    assert message.startswith("the API answered HTTP 400")
    assert secret[:6] not in message  # no part of the secret, however the line was cut


async def test_post_json_masks_before_it_shortens_too() -> None:
    secret = "SECRETVALUE123456"

    def echo(_head: bytes, _body: bytes) -> list[bytes]:
        said = ("x" * 140 + " key=" + secret).encode()
        return [response("500 Internal Server Error", said, "Content-Type: text/plain")]

    async with RawServer(echo) as server:
        client = ChatClient(
            base_url=f"{server.base_url}?key={secret}",
            api_key=None,
            timeout_s=20,
            chunk_timeout_ms=20_000,
        )
        try:
            await client.post_json("tokenize", {"content": "hi"})
        except ClientError as error:
            message = str(error)
        finally:
            await client.aclose()
    assert message.startswith("HTTP 500") and secret[:8] not in message


# -- bytes that are not UTF-8 -----------------------------------------------------------------


async def test_a_byte_that_is_not_utf8_is_replaced_and_the_reply_goes_on() -> None:
    body = stream_of("caf", "X", " and more").replace(b'"X"', b'"\xe9"')

    def answer(_head: bytes, _body: bytes) -> list[bytes]:
        return [response("200 OK", body, SSE_HEAD)]

    async with RawServer(answer) as server:
        done = await finished(server.base_url)
    assert done.record.status is RequestStatus.OK and done.record.error_message is None
    assert done.text == "caf\ufffd and more"
    assert done.record.notices == [
        "1 chunk(s) held bytes that are not UTF-8: shown as U+FFFD, the reply read on"
    ]


# -- compressed bodies --------------------------------------------------------------------------


def whole_reply(text: str) -> bytes:
    message = {"role": "assistant", "content": text}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return json.dumps({"object": "chat.completion", "choices": [choice]}).encode()


async def test_a_gzip_body_cut_before_its_end_is_reported_not_taken_as_whole() -> None:
    packed = gzip.compress(whole_reply("a long enough reply " * 50))
    cut = packed[: len(packed) - 12]  # the deflate data ends, the gzip trailer does not come

    def answer(_head: bytes, _body: bytes) -> list[bytes]:
        return [response("200 OK", cut, JSON_HEAD, "Content-Encoding: gzip")]

    async with RawServer(answer) as server:
        done = await finished(server.base_url, stream=False)
    assert done.record.status is RequestStatus.ERROR and done.record.error_kind == "bad_body"
    assert "a gzip body cut off before its end" in (done.record.error_message or "")
    assert "not JSON" not in (done.record.error_message or "")


async def test_a_streamed_gzip_body_cut_mid_way_ends_the_reply_early_saying_so() -> None:
    packer = zlib.compressobj(wbits=zlib.MAX_WBITS | 16)
    # Whole events, flushed, and then the close: the gzip stream's end and trailer never come.
    events = b"".join(event(text) for text in ("one ", "two ", "three"))
    body = packer.compress(events) + packer.flush(zlib.Z_SYNC_FLUSH)

    def answer(_head: bytes, _body: bytes) -> list[bytes]:
        return [response("200 OK", body, SSE_HEAD, "Content-Encoding: gzip", length=False)]

    async with RawServer(answer) as server:
        done = await finished(server.base_url)
    assert done.record.status is RequestStatus.ENDED_EARLY
    assert "a gzip body cut off before its end" in (done.record.error_message or "")
    assert done.text == "one two three"


async def test_a_gzip_bomb_is_refused_at_the_limit_with_its_own_message() -> None:
    bomb = gzip.compress(b" " * (80 << 20), compresslevel=9)  # ~80 KB that expand to 80 MiB

    def answer(_head: bytes, _body: bytes) -> list[bytes]:
        return [
            response("200 OK", bomb, "Content-Type: application/json", "Content-Encoding: gzip")
        ]

    async with RawServer(answer) as server:
        done = await finished(server.base_url, stream=False)
    message = done.record.error_message or ""
    assert done.record.error_kind == "bad_body"
    assert "a compressed body that expands past 64 MiB" in message
    assert "OverflowError" not in message


# -- a reply faster than its reader -------------------------------------------------------------


async def test_a_reader_that_falls_behind_pauses_the_socket_not_its_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pieces = [f"w{i:05d} " for i in range(20_000)]
    body = stream_of(*pieces)
    spies: list[Any] = []

    class Spy(attempt_module.Attempt):
        most = 0

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            spies.append(self)

        def _take_event(self, event: bytes, at: float) -> bool:
            try:
                return super()._take_event(event, at)
            finally:
                self.most = max(self.most, self._queue.qsize())

    monkeypatch.setattr(client_module, "Attempt", Spy)

    def answer(_head: bytes, _body: bytes) -> list[bytes]:
        return [response("200 OK", body, SSE_HEAD)]

    async with RawServer(answer) as server:
        client = ChatClient(
            base_url=server.base_url, api_key=None, timeout_s=60, chunk_timeout_ms=60_000
        )
        text: list[str] = []
        try:
            async for item in client.stream(ask()):
                if isinstance(item, Delta):
                    if not text:  # stop taking until the reading has been paused
                        for _ in range(2000):
                            if spies[0].hold_backs:
                                break
                            await asyncio.sleep(0.005)
                    text.append(item.text)
                elif isinstance(item, Finished):
                    done = item
        finally:
            await client.aclose()
    [spy] = spies
    assert spy.hold_backs >= 1
    # Parsed but untaken chunks never grew past the limit and the rest of the read in hand
    # (asyncio reads up to 256 KiB at a time).
    one_read = (256 << 10) // len(event(pieces[0])) + 1
    assert spy.most <= attempt_module.BACKLOG_MAX + one_read < len(pieces)
    assert "".join(text) == "".join(pieces) and done.record.status is RequestStatus.OK
    assert done.record.notices[-1].startswith(
        "the reply came faster than it could be shown: reading paused"
    )
