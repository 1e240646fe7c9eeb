"""The demo endpoint's HTTP/1.1 layer, spoken to byte by byte over a raw loopback socket."""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest

from tui.demo import DemoServer

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "reply 3 tokens"}]})


async def exchange(server: DemoServer, data: bytes) -> bytes:
    """Send raw bytes, read until the server closes the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(data)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(-1), timeout=10)
    finally:
        writer.close()


def post(body: str = BODY, *, path: str = "/v1/chat/completions", extra: str = "") -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{extra}"
        f"Content-Length: {len(body.encode())}\r\n\r\n"
    )
    return head.encode() + body.encode()


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"NONSENSE\r\n\r\n",
        b"GET /v1/models HTTP/1.1 extra\r\nHost: x\r\n\r\n",
        b"GET /v1/models HTTP/2.0\r\nHost: x\r\n\r\n",
        b"GET v1/models HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /v1/models HTTP/1.1\r\n\r\n",  # HTTP/1.1 requires Host
        b"GET /v1/models HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n",
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n",
        b"\xff\xfe GET / HTTP/1.1\r\n\r\n",
    ],
)
async def test_malformed_requests_get_400_and_close(
    server: DemoServer, request_bytes: bytes
) -> None:
    response = await exchange(server, request_bytes)
    assert response.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert b"Connection: close" in response


async def test_oversized_header_gets_431(server: DemoServer) -> None:
    response = await exchange(server, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70_000)
    assert response.startswith(b"HTTP/1.1 431 ")


async def test_unknown_paths_are_a_website_404(server: DemoServer) -> None:
    async with httpx2.AsyncClient() as http:
        home = await http.get(server.root_url + "/")
        assert home.status_code == 200 and "demo endpoint" in home.text
        # A base_url without /v1 (the website) gives an HTML 404 on /chat/completions.
        website = await http.post(server.root_url + "/chat/completions", content=BODY)
        assert website.status_code == 404
        assert website.headers["content-type"].startswith("text/html")
        # Under /v1 the API answers in JSON, as OpenAI does.
        api = await http.get(server.base_url + "/nothing")
        assert api.status_code == 404
        assert api.json()["error"]["code"] == "unknown_url"
        wrong_method = await http.get(server.base_url + "/chat/completions")
        assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "POST"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ("{not json", None),
        ("[1, 2]", None),
        ('{"model": "m"}', "messages"),
        ('{"messages": []}', "messages"),
        ('{"messages": ["hi"]}', "messages"),
        ('{"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}', "max_tokens"),
        ('{"messages": [{"role": "user", "content": "x"}], "max_tokens": "9"}', "max_tokens"),
    ],
)
async def test_bad_chat_bodies_get_openai_shaped_400(
    server: DemoServer, body: str, param: str | None
) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(server.base_url + "/chat/completions", content=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert set(error) >= {"message", "type", "code"}
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert server.requests == []  # not a chat request: nothing to log


async def test_connection_close_is_honoured(server: DemoServer) -> None:
    response = await exchange(server, post())  # read(-1) returns only once the server closes
    head, _, body = response.partition(b"\r\n\r\n")
    assert b"HTTP/1.1 200 OK" in head and b"Connection: close" in head
    assert json.loads(body)["usage"]["completion_tokens"] == 3


async def test_expect_100_continue(server: DemoServer) -> None:
    response = await exchange(server, post(extra="Expect: 100-continue\r\n"))
    assert response.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")


async def test_chunked_request_body(server: DemoServer) -> None:
    data = BODY.encode()
    chunked = b"%x\r\n%b\r\n%x;ext=1\r\n%b\r\n0\r\n\r\n" % (
        10,
        data[:10],
        len(data) - 10,
        data[10:],
    )
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    response = await exchange(server, head + chunked)
    assert response.startswith(b"HTTP/1.1 200 OK\r\n")
    assert server.requests[0]["messages"] == json.loads(BODY)["messages"]


async def test_http10_stream_uses_close_framing(server: DemoServer) -> None:
    body = json.dumps({"messages": [{"role": "user", "content": "reply 4 tokens"}], "stream": True})
    request = (
        f"POST /v1/chat/completions HTTP/1.0\r\nContent-Length: {len(body)}\r\n\r\n{body}"
    ).encode()
    response = await exchange(server, request)
    head, _, payload = response.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding" not in head and b"Connection: close" in head
    events = payload.decode().split("\n\n")[:-1]
    assert events[-1] == "data: [DONE]" and len(events) == 1 + 4 + 1 + 1


async def test_pipelined_requests_are_answered_in_order(server: DemoServer) -> None:
    get = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"
    response = await exchange(server, get + get + post())
    assert response.count(b"HTTP/1.1 200 OK\r\n") == 3
    assert response.index(b'"object": "list"') < response.index(b'"chat.completion"')


async def test_half_a_request_then_gone_is_quiet(
    server: DemoServer, capfd: pytest.CaptureFixture[str]
) -> None:
    _reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    await writer.drain()
    writer.close()
    await asyncio.sleep(0.05)
    async with httpx2.AsyncClient() as http:
        assert (await http.get(server.base_url + "/models")).status_code == 200
    assert capfd.readouterr().err == ""
