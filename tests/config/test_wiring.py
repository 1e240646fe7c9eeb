"""The configuration reaches the engine as values (tui/wiring.py): the headers, query, key
header and proxies of the config are what the client puts on the wire; the embedded demo
endpoint gets none of them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from helpers.client import DONE, Canned, collect, make_request, sse

from tui import locations
from tui.config import Config
from tui.engine.http import proxy_rules
from tui.wiring import Endpoint, client_for


async def test_config_values_go_on_the_wire() -> None:
    config = dataclasses.replace(
        Config(),
        extra_headers={"X-Title": "firsttoken", "HTTP-Referer": "https://x.dev"},
        extra_query={"api-version": "2024-10-21"},
        api_key_header="api-key",
        proxies=proxy_rules({"NO_PROXY": "*", "http_proxy": "http://127.0.0.1:9"}),
    )
    async with Canned([sse({"content": "ok"}, "stop"), DONE]) as server:
        endpoint = Endpoint(base_url=server.base_url, api_key="sk-config-key-1234")
        _, finished = await collect(client_for(config, endpoint), make_request())
        head = server.received[0].split(b"\r\n\r\n")[0].decode()
    assert finished.record.status.value == "ok", finished.record.error_message
    lines = head.split("\r\n")
    assert lines[0] == "POST /v1/chat/completions?api-version=2024-10-21 HTTP/1.1"
    assert "X-Title: firsttoken" in lines and "HTTP-Referer: https://x.dev" in lines
    assert "api-key: sk-config-key-1234" in lines
    assert not any(line.lower().startswith("authorization") for line in lines)


async def test_the_demo_endpoint_gets_none_of_the_apis_settings(isolated_home: Path) -> None:
    config = dataclasses.replace(Config(), extra_headers={"X-Title": "x"}, api_key_header="k")
    async with Canned([sse({"content": "ok"}, "stop"), DONE]) as server:
        demo = Endpoint(base_url=server.base_url, api_key="demo", simulated=True)
        client = client_for(config, demo)
        await collect(client, make_request())
        head = server.received[0].decode("latin-1")
    assert "X-Title" not in head and "Authorization: Bearer demo" in head
    assert client.dialects.path == locations.dialects_path()
