"""firsttoken's own HTTP/1.1 client: just what an OpenAI-compatible chat API needs, on plain
asyncio, so sending a request imports nothing heavy and every phase of it can be stamped.

    url.py            URLs: where to connect, the request target, a path joined onto a base URL
    headers.py        response headers (case-insensitive names, repeated fields)
    response_head.py  the status line and header fields, read as h11 reads them, with limits
    body.py           framing (length, chunked, to the close), gzip/deflate, the sink
    connection.py     one connection on an asyncio Protocol: bytes to the reader in the callback
    connect.py        DNS, TCP, a proxy's CONNECT tunnel, TLS; each step stamped
    proxy.py          which proxy a URL goes through (http_proxy, HTTPS_PROXY, NO_PROXY, ...)
    client.py         requests over a pool of kept-alive connections per route
    errors.py         what an exchange fails with (status, connection with its cause, body)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.engine.http.client import Exchange, HttpClient, Request
    from tui.engine.http.errors import (
        BodyRefused,
        ConnectionFailed,
        RequestFailed,
        ServerReportedError,
        StatusError,
    )
    from tui.engine.http.proxy import BadProxy, Proxy, ProxyRules, proxy_rules
    from tui.engine.http.url import BadURL, Origin, Target, join_url, parse_url, without_query

# Each name loads its own module on first use: the config reads proxy.py without the rest.
_WHERE = {
    "Exchange": "client",
    "HttpClient": "client",
    "Request": "client",
    "BodyRefused": "errors",
    "ConnectionFailed": "errors",
    "RequestFailed": "errors",
    "ServerReportedError": "errors",
    "StatusError": "errors",
    "BadProxy": "proxy",
    "Proxy": "proxy",
    "ProxyRules": "proxy",
    "proxy_rules": "proxy",
    "BadURL": "url",
    "Origin": "url",
    "Target": "url",
    "join_url": "url",
    "parse_url": "url",
    "without_query": "url",
}
__all__ = [
    "BadProxy",
    "BadURL",
    "BodyRefused",
    "ConnectionFailed",
    "Exchange",
    "HttpClient",
    "Origin",
    "Proxy",
    "ProxyRules",
    "Request",
    "RequestFailed",
    "ServerReportedError",
    "StatusError",
    "Target",
    "join_url",
    "parse_url",
    "proxy_rules",
    "without_query",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'tui.engine.http' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tui.engine.http.{module}"), name)
