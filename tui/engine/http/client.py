"""HTTP/1.1 requests over kept-alive connections, one pool per origin (or per proxy route).

`open()` sends a request and returns once its response head has arrived, stamping each phase
on the way (connection set-up when a new connection is needed, the request written, the head
received); the body is then read by the caller through the Exchange, straight off the
connection. A kept connection that turns out to have been closed by the server before it
answered anything is replaced by a new one, once (the server never saw the request).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass

from tui.engine.http.body import (
    MAX_DECODED_BODY,
    NO_BODY,
    BodyReceiver,
    Collector,
    Sink,
    content_decoder,
    framing_of,
)
from tui.engine.http.connect import Stamps, connect, tls_context
from tui.engine.http.connection import Connection
from tui.engine.http.errors import CLOSED, PROTOCOL, RESET, ConnectionFailed
from tui.engine.http.proxy import Proxy, ProxyRules
from tui.engine.http.response_head import HeadError, HeadReader, ResponseHead
from tui.engine.http.url import Origin, Target

perf_counter = time.perf_counter

REQUEST_SENT_PHASE = "request_sent"
RESPONSE_HEAD_PHASE = "response_head"
STALE_CONNECTION_PHASE = "stale_connection"

# Idle connections kept per route, and for how long: servers drop idle ones after 5-120 s, and a
# dead one is noticed (readable) before use anyway.
MAX_IDLE_PER_ROUTE = 4
MAX_IDLE_S = 90.0


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    target: Target
    headers: tuple[tuple[str, str], ...] = ()  # besides Host, Content-Length, Proxy-Authorization
    body: bytes = b""


def _checked_header(name: str, value: str) -> str:
    if not name or any(ch in name for ch in " \t\r\n:") or any(ch in value for ch in "\r\n\0"):
        raise ValueError(f"header {name!r}: a name or value HTTP cannot carry (a line break?)")
    return f"{name}: {value}\r\n"


def request_head(request: Request, proxy: Proxy | None) -> bytes:
    """The request line and headers (absolute-form through an HTTP proxy for http:// URLs)."""
    target = request.target
    via_proxy = proxy is not None and target.origin.scheme == "http"
    line_target = target.absolute if via_proxy else target.path_and_query
    parts = [f"{request.method} {line_target} HTTP/1.1\r\nHost: {target.origin.host_header}\r\n"]
    parts += [_checked_header(name, value) for name, value in request.headers]
    if request.body or request.method in ("POST", "PUT", "PATCH"):
        parts.append(f"Content-Length: {len(request.body)}\r\n")
    if via_proxy and proxy is not None and proxy.authorization is not None:
        parts.append(f"Proxy-Authorization: {proxy.authorization}\r\n")
    parts.append("\r\n")
    try:
        return "".join(parts).encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError(
            "a header holds characters HTTP cannot carry (non-Latin-1: a placeholder key?)"
        ) from None


class _HeadReceiver:
    def __init__(self, where: str) -> None:
        self.reader = HeadReader()
        self.head: ResponseHead | None = None
        self.at = 0.0
        self.where = where

    def data(self, data: bytes, at: float) -> bytes | None:
        try:
            done = self.reader.feed(data)
        except HeadError as error:
            raise ConnectionFailed(PROTOCOL, self.where, f"a bad response head: {error}") from None
        if done is None:
            return None
        self.head, rest = done
        self.at = at
        return rest

    def end(self, at: float) -> None:
        started = " mid-head" if self.reader.held else ""
        raise ConnectionFailed(
            CLOSED, self.where, f"the server closed the connection without an answer{started}"
        )


RouteKey = tuple[str, ...]


class Exchange:
    """A response whose head has arrived: read its body once, then close (kept or dropped)."""

    def __init__(
        self,
        pool: HttpClient,
        key: RouteKey,
        connection: Connection,
        method: str,
        head: ResponseHead,
        head_at: float,
        reused: bool,
    ) -> None:
        self.head = head
        self.head_at = head_at
        self.reused = reused
        self.where = connection.where
        self._pool = pool
        self._key = key
        self._connection: Connection | None = connection
        self._method = method
        self._complete = False

    @property
    def status(self) -> int:
        return self.head.status

    def hold_back(self, paused: bool) -> None:
        """Pause (True) or resume (False) reading the body off the socket (Connection.hold_back)."""
        if self._connection is not None:
            self._connection.hold_back(paused)

    async def receive(self, sink: Sink) -> None:
        """The body's decoded bytes to `sink` as they arrive (see body.Sink); returns once the
        body has ended (read to its end even after the sink wants no more, for reuse)."""
        connection = self._connection
        if connection is None:
            raise RuntimeError("the exchange is closed")
        framing = framing_of(self.head, self._method)
        if framing == NO_BODY:  # nothing will arrive to say so: the body is already whole
            self._complete = True
            return
        receiver = BodyReceiver(
            framing,
            content_decoder(self.head, self.where),
            sink,
            self.where,
        )
        try:
            await connection.receive(receiver)
        except BaseException:
            connection.stop_receiving()
            raise
        self._complete = True

    async def read(self, limit: int = MAX_DECODED_BODY) -> tuple[bytes, float]:
        """The whole body (at most `limit` bytes of it) and when its last bytes arrived."""
        collector = Collector(limit)
        await self.receive(collector)
        return bytes(collector.data), collector.last_at or self.head_at

    def close(self) -> None:
        """Keep the connection for the next request when the response was read whole and the
        server allows it; drop it otherwise (a response cut short cannot be continued)."""
        connection, self._connection = self._connection, None
        if connection is None:
            return
        framing = framing_of(self.head, self._method)
        if self._complete and self.head.keep_alive and framing.kind != "close":
            connection.reusable = True
            self._pool.release(self._key, connection)
        else:
            connection.abort()


class HttpClient:
    """Requests over pooled connections; `proxies` from the environment (proxy.py), if any."""

    def __init__(
        self,
        proxies: ProxyRules | None = None,
        context: Callable[[], ssl.SSLContext] = tls_context,
    ) -> None:
        self.proxies = proxies or ProxyRules()
        self._make_context = context
        self._context: ssl.SSLContext | None = None
        self._idle: dict[RouteKey, list[Connection]] = {}
        self._closed = False

    def tls(self) -> ssl.SSLContext:
        """The TLS context, made on first use (loading the trust store takes milliseconds)."""
        if self._context is None:
            self._context = self._make_context()
        return self._context

    def route(self, origin: Origin) -> tuple[RouteKey, Proxy | None]:
        proxy = self.proxies.proxy_for(origin)
        if proxy is None:
            return (origin.scheme, origin.host, str(origin.port)), None
        if origin.scheme == "http":  # absolute-form requests: one route for every http origin
            return ("via", proxy.origin.host, str(proxy.origin.port)), proxy
        tunnel_end = (origin.host, str(origin.port))
        return ("tunnel", proxy.origin.host, str(proxy.origin.port), *tunnel_end), proxy

    def _idle_connection(self, key: RouteKey) -> Connection | None:
        idle = self._idle.get(key)
        now = perf_counter()
        while idle:
            connection = idle.pop()
            if connection.usable and now - connection.idle_since < MAX_IDLE_S:
                return connection
            connection.abort()
        return None

    def release(self, key: RouteKey, connection: Connection) -> None:
        if self._closed or not connection.usable:
            connection.abort()
            return
        idle = self._idle.setdefault(key, [])
        connection.idle_since = perf_counter()
        idle.append(connection)
        while len(idle) > MAX_IDLE_PER_ROUTE:
            idle.pop(0).abort()

    async def open(self, request: Request, stamps: Stamps) -> Exchange:
        """Send `request`; returns at its response head (phases appended to `stamps`)."""
        origin = request.target.origin
        key, proxy = self.route(origin)
        connection = self._idle_connection(key)
        reused = connection is not None
        mark = len(stamps)
        if connection is None:
            connection = await connect(origin, proxy, self.tls, stamps)
        try:
            head, head_at = await self._send(connection, request, proxy, stamps)
        except ConnectionFailed as failure:
            connection.abort()
            stale = reused and not connection.received_any and failure.cause in (CLOSED, RESET)
            if not stale:
                raise
            # The server closed the kept connection as the request went out: it never saw it.
            del stamps[mark:]
            stamps.append((STALE_CONNECTION_PHASE, perf_counter()))
            connection = await connect(origin, proxy, self.tls, stamps)
            reused = False
            try:
                head, head_at = await self._send(connection, request, proxy, stamps)
            except BaseException:
                connection.abort()
                raise
        except BaseException:
            connection.abort()
            raise
        return Exchange(self, key, connection, request.method, head, head_at, reused)

    @staticmethod
    async def _send(
        connection: Connection, request: Request, proxy: Proxy | None, stamps: Stamps
    ) -> tuple[ResponseHead, float]:
        await connection.write(request_head(request, proxy) + request.body)
        stamps.append((REQUEST_SENT_PHASE, perf_counter()))
        receiver = _HeadReceiver(connection.where)
        try:
            await connection.receive(receiver)
        except BaseException:
            connection.stop_receiving()
            raise
        assert receiver.head is not None
        stamps.append((RESPONSE_HEAD_PHASE, receiver.at))
        return receiver.head, receiver.at

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()
        await asyncio.sleep(0)  # let the transports run their close callbacks
