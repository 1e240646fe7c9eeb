"""What the client puts on the wire, as a scripted server on loopback receives it: the request
line with the base URL's own query kept after the path, the headers (Accept for a stream or a
body, identity encoding, the key as Bearer or in a header of the provider's choosing, extra
headers), and the body's fields."""

from __future__ import annotations

import json

from helpers.client import DONE, TEST_KEY, Canned, collect, make_client, make_request, sse


def head_and_body(raw: bytes) -> tuple[str, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    line, *fields = head.decode("latin-1").split("\r\n")
    headers = {}
    for field in fields:
        name, _, value = field.partition(":")
        headers[name.strip().lower()] = value.strip()
    return line, headers, body


REPLY = [sse({"content": "hi"}, "stop"), DONE]


async def test_a_streamed_request_on_the_wire() -> None:
    async with Canned(REPLY) as server:
        _, finished = await collect(make_client(server.base_url), make_request())
        line, headers, body = head_and_body(server.received[0])
        host = server.base_url.split("//")[1].split("/")[0]
    assert finished.record.status.value == "ok"
    assert line == "POST /v1/chat/completions HTTP/1.1"
    assert headers["accept"] == "text/event-stream"
    assert headers["accept-encoding"] == "identity"
    assert headers["content-type"] == "application/json"
    assert headers["authorization"] == f"Bearer {TEST_KEY}"
    assert headers["user-agent"].startswith("firsttoken/")
    assert headers["host"] == host
    assert int(headers["content-length"]) == len(body)
    assert json.loads(body) == make_request().body()


async def test_a_whole_body_request_asks_for_json() -> None:
    body = json.dumps({"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]})
    async with Canned([body.encode()], chunked=False, content_type="application/json") as server:
        _, finished = await collect(make_client(server.base_url), make_request(stream=False))
        _, headers, sent = head_and_body(server.received[0])
    assert finished.text == "hi"
    assert headers["accept"] == "application/json"
    assert json.loads(sent)["stream"] is False


async def test_the_base_urls_query_stays_a_query_and_extra_query_and_headers_are_sent() -> None:
    async with Canned(REPLY) as server:
        client = make_client(
            server.base_url + "?api-version=2024-10-21",
            extra_query={"tag": "a b"},
            extra_headers={"X-Title": "firsttoken", "User-Agent": "mine/1"},
        )
        await collect(client, make_request())
        line, headers, _ = head_and_body(server.received[0])
    assert line == "POST /v1/chat/completions?api-version=2024-10-21&tag=a%20b HTTP/1.1"
    assert headers["x-title"] == "firsttoken"
    assert headers["user-agent"] == "mine/1"  # an extra header replaces the default


async def test_the_key_in_a_header_of_the_providers_choosing() -> None:
    async with Canned(REPLY) as server:
        await collect(make_client(server.base_url, auth_header="api-key"), make_request())
        _, headers, _ = head_and_body(server.received[0])
    assert headers["api-key"] == TEST_KEY and "authorization" not in headers


async def test_credentials_in_the_base_url_without_a_key_are_basic_auth() -> None:
    async with Canned(REPLY) as server:
        url = server.base_url.replace("http://", "http://user:p%40ss@")
        await collect(make_client(url, api_key=None), make_request())
        line, headers, _ = head_and_body(server.received[0])
    assert headers["authorization"] == "Basic dXNlcjpwQHNz"  # user:p@ss
    assert "user" not in line and "@" not in headers["host"]


async def test_list_models_asks_for_the_models_path_with_the_query() -> None:
    listing = json.dumps({"object": "list", "data": [{"id": "m1"}, {"id": "m2"}, {"x": 1}]})
    async with Canned([listing.encode()], chunked=False, content_type="application/json") as s:
        client = make_client(s.base_url + "?api-version=1")
        try:
            models = await client.list_models()
        finally:
            await client.aclose()
        line, headers, _ = head_and_body(s.received[0])
    assert models == ["m1", "m2"]
    assert line == "GET /v1/models?api-version=1 HTTP/1.1"
    assert headers["accept"] == "application/json"
