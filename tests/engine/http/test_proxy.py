"""Proxies from the environment, read as curl reads them, and requests through a tiny HTTP proxy
written here: a CONNECT tunnel for https://, absolute-form requests for http://, credentials
sent as Proxy-Authorization and never shown, NO_PROXY honoured."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator

import pytest
from helpers.client import closed_port, collect, demo, make_client, make_request
from helpers.tls import CERTIFICATE, tls_in_front_of

from tui.engine.http import BadProxy, Origin, proxy_rules
from tui.engine.http.proxy import bypasses


def test_which_variable_serves_which_scheme_as_curl_reads_them() -> None:
    rules = proxy_rules(
        {"https_proxy": "http://lower:3128", "HTTPS_PROXY": "http://upper:3128", "http_proxy": "p"}
    )
    assert rules.https is not None and rules.https.origin.host == "lower"  # lower case first
    assert rules.https.source == "https_proxy"
    assert rules.http is not None and rules.http.origin == Origin("http", "p", 1080)  # curl's port
    # curl ignores HTTP_PROXY in capitals (a CGI server sets it from a request header).
    assert proxy_rules({"HTTP_PROXY": "http://evil:80"}).http is None
    every = proxy_rules({"ALL_PROXY": "http://all:8080", "http_proxy": ""})
    assert every.http is not None and every.http.origin.host == "all"  # empty is unset
    assert every.https is not None and every.https.source == "ALL_PROXY"
    assert not proxy_rules({}).any


def test_credentials_become_proxy_authorization_and_are_never_shown() -> None:
    rules = proxy_rules({"HTTPS_PROXY": "http://alice:s%3Ecret@proxy.corp:8080"})
    proxy = rules.https
    assert proxy is not None
    assert proxy.authorization == "Basic " + base64.b64encode(b"alice:s>cret").decode()
    assert proxy.shown == "http://***@proxy.corp:8080"
    assert "cret" not in repr(proxy) and "alice" not in repr(proxy)


@pytest.mark.parametrize(
    "value, words",
    [
        ("socks5://h:1080", "socks5:// proxy"),
        ("https://h:443", "https:// proxy"),
        ("http://", "no host"),
    ],
)
def test_a_proxy_that_cannot_be_used_is_one_line_naming_the_variable(
    value: str, words: str
) -> None:
    with pytest.raises(BadProxy) as refused:
        proxy_rules({"HTTPS_PROXY": value})
    assert str(refused.value).startswith("$HTTPS_PROXY: ") and words in str(refused.value)


@pytest.mark.parametrize(
    "host, entries, expected",
    [
        ("api.example.com", ("example.com",), True),
        ("example.com", (".example.com",), True),
        ("api.example.com", (".example.com",), True),
        ("notexample.com", ("example.com",), False),
        ("example.com.org", ("example.com",), False),
        ("EXAMPLE.com.", ("example.COM",), True),
        ("anything", ("*",), True),
        ("10.1.2.3", ("10.0.0.0/8",), True),
        ("11.1.2.3", ("10.0.0.0/8",), False),
        ("127.0.0.1", ("127.0.0.1",), True),
        ("::1", ("::1",), True),
        ("::1", ("[::1]",), True),
        ("localhost", ("127.0.0.1",), False),  # names and addresses are not mixed
        ("host", (), False),
    ],
)
def test_no_proxy_matches_as_curl_does(host: str, entries: tuple[str, ...], expected: bool) -> None:
    assert bypasses(host, entries) is expected


class TinyProxy:
    """An HTTP proxy on loopback: CONNECT tunnels and absolute-form requests, optionally asking
    for Basic credentials. `seen` keeps each request line it got."""

    def __init__(self, credentials: str | None = None) -> None:
        self.credentials = credentials
        self.seen: list[str] = []
        self.authorizations: list[str | None] = []
        self._server: asyncio.Server | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def __aenter__(self) -> TinyProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            head = await reader.readuntil(b"\r\n\r\n")
            line, *fields = head.decode("latin-1").split("\r\n")
            self.seen.append(line)
            headers = {
                name.strip().lower(): value.strip()
                for name, _, value in (field.partition(":") for field in fields if field)
            }
            authorization = headers.get("proxy-authorization")
            self.authorizations.append(authorization)
            if self.credentials is not None:
                expected = "Basic " + base64.b64encode(self.credentials.encode()).decode()
                if authorization != expected:
                    writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\n")
                    writer.write(b"Proxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n")
                    await writer.drain()
                    writer.close()
                    return
            method, target, _ = line.split(" ")
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                upstream_r, upstream_w = await asyncio.open_connection(host, int(port))
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await writer.drain()
            else:  # absolute-form: http://host:port/path -> origin-form to that host
                rest = target.split("://", 1)[1]
                authority, _, path = rest.partition("/")
                host, _, port = authority.rpartition(":")
                upstream_r, upstream_w = await asyncio.open_connection(host, int(port or 80))
                kept = [f for f in fields if not f.lower().startswith("proxy-authorization")]
                upstream_w.write(
                    ("\r\n".join([f"{method} /{path} HTTP/1.1", *kept])).encode("latin-1")
                )
            await asyncio.gather(_pipe(reader, upstream_w), _pipe(upstream_r, writer))
        writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


@contextlib.asynccontextmanager
async def https_demo(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[int]:
    monkeypatch.setenv("SSL_CERT_FILE", str(CERTIFICATE))
    with demo("instant") as server:
        async with tls_in_front_of(server.port) as tls_port:
            yield tls_port


async def test_https_goes_through_a_connect_tunnel(monkeypatch: pytest.MonkeyPatch) -> None:
    async with https_demo(monkeypatch) as tls_port, TinyProxy() as proxy:
        rules = proxy_rules({"HTTPS_PROXY": f"127.0.0.1:{proxy.port}"})
        client = make_client(f"https://localhost:{tls_port}/v1", proxies=rules)
        _, finished = await collect(client, make_request())
    record = finished.record
    assert record.status.value == "ok", record.error_message
    assert finished.text
    assert proxy.seen == [f"CONNECT localhost:{tls_port} HTTP/1.1"]
    assert record.phases_ms is not None
    assert list(record.phases_ms)[:3] == ["connect", "proxy_tunnel", "tls"]  # no DNS: an IP


async def test_http_goes_as_an_absolute_form_request_with_credentials() -> None:
    with demo("instant") as server:
        async with TinyProxy(credentials="alice:s3cret") as proxy:
            rules = proxy_rules({"http_proxy": f"http://alice:s3cret@127.0.0.1:{proxy.port}"})
            client = make_client(server.base_url, proxies=rules)
            _, finished = await collect(client, make_request())
    assert finished.record.status.value == "ok", finished.record.error_message
    assert proxy.seen == [f"POST {server.base_url}/chat/completions HTTP/1.1"]
    assert proxy.authorizations == ["Basic " + base64.b64encode(b"alice:s3cret").decode()]


async def test_a_proxy_refusing_the_credentials_is_named_without_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with https_demo(monkeypatch) as tls_port, TinyProxy(credentials="alice:right") as proxy:
        port = proxy.port
        rules = proxy_rules({"HTTPS_PROXY": f"http://alice:wrong-secret@127.0.0.1:{port}"})
        client = make_client(f"https://localhost:{tls_port}/v1", proxies=rules, max_retries=0)
        _, finished = await collect(client, make_request())
    record = finished.record
    message = record.error_message or ""
    assert record.status.value == "error" and record.error_kind == "connection"
    assert f"proxy 127.0.0.1:{port} ($HTTPS_PROXY)" in message
    assert "407" in message and "credentials" in message
    assert "wrong-secret" not in message and "alice" not in message


async def test_no_proxy_goes_direct() -> None:
    with demo("instant") as server:
        async with TinyProxy() as proxy:
            env = {
                "http_proxy": f"http://127.0.0.1:{proxy.port}",
                "NO_PROXY": "localhost,127.0.0.0/8",
            }
            client = make_client(server.base_url, proxies=proxy_rules(env))
            _, finished = await collect(client, make_request())
    assert finished.record.status.value == "ok" and proxy.seen == []


async def test_a_proxy_that_is_not_there_is_the_error() -> None:
    port = closed_port()
    rules = proxy_rules({"https_proxy": f"http://127.0.0.1:{port}"})
    client = make_client("https://api.example.invalid/v1", proxies=rules, max_retries=0)
    _, finished = await collect(client, make_request())
    message = finished.record.error_message or ""
    assert finished.record.error_kind == "connection"
    assert message.startswith(f"proxy 127.0.0.1:{port} ($https_proxy): cannot reach the proxy")
