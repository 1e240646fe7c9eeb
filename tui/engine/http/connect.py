"""Opening a connection, each step stamped: the name resolved (when it is a name), the TCP
connection made, a proxy's CONNECT tunnel set up, the TLS handshake done.

Each step appends (phase, perf_counter()) to `stamps` as it ends, so the time of each is the gap
to the stamp before it. Failures become ConnectionFailed with the cause (dns, refused, timeout,
tls, proxy) and the OS or TLS error chained.
"""

from __future__ import annotations

import asyncio
import errno
import socket
import ssl
import time
from collections.abc import Callable

from tui.engine.http.connection import Connection
from tui.engine.http.errors import (
    DNS,
    PROTOCOL,
    PROXY,
    REFUSED,
    TIMEOUT,
    TLS,
    UNREACHABLE,
    ConnectionFailed,
)
from tui.engine.http.proxy import Proxy
from tui.engine.http.response_head import HeadError, HeadReader, ResponseHead
from tui.engine.http.url import Origin

perf_counter = time.perf_counter

Stamps = list[tuple[str, float]]

# Phase names, in the order they happen (see tui/engine/metrics/phases.py for all of them).
DNS_PHASE = "dns"
CONNECT_PHASE = "connect"
PROXY_TUNNEL_PHASE = "proxy_tunnel"
TLS_PHASE = "tls"


def tls_context() -> ssl.SSLContext:
    """The system's trust store and Python's defaults (hostname checked, TLS 1.2 or newer)."""
    context = ssl.create_default_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


async def resolve(origin: Origin, stamps: Stamps) -> list[tuple[int, tuple[object, ...]]]:
    """(family, socket address) to try in order; an IP literal needs no lookup (no stamp)."""
    if origin.is_ip_literal:
        family = socket.AF_INET6 if ":" in origin.host else socket.AF_INET
        address: tuple[object, ...] = (
            (origin.host, origin.port, 0, 0)
            if family == socket.AF_INET6
            else (origin.host, origin.port)
        )
        return [(family, address)]
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(
            origin.host, origin.port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except socket.gaierror as error:
        failure = ConnectionFailed(DNS, origin.host_port, f"cannot resolve {origin.host!r}")
        raise failure from error
    stamps.append((DNS_PHASE, perf_counter()))
    return [(family, address) for family, _, _, _, address in infos]


def _connect_failure(error: OSError, where: str) -> ConnectionFailed:
    if isinstance(error, ConnectionRefusedError) or error.errno == errno.ECONNREFUSED:
        cause = REFUSED
    elif isinstance(error, TimeoutError) or error.errno == errno.ETIMEDOUT:
        cause = TIMEOUT
    else:
        cause = UNREACHABLE
    failure = ConnectionFailed(cause, where, str(error) or type(error).__name__)
    failure.__cause__ = error
    return failure


async def open_tcp(
    addresses: list[tuple[int, tuple[object, ...]]], where: str, stamps: Stamps
) -> Connection:
    """A Connection to the first address that accepts (each tried in turn)."""
    loop = asyncio.get_running_loop()
    last: OSError | None = None
    for family, address in addresses:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            await loop.sock_connect(sock, address)
        except OSError as error:
            sock.close()
            last = error
            continue
        except BaseException:
            sock.close()
            raise
        stamps.append((CONNECT_PHASE, perf_counter()))
        try:
            _, connection = await loop.create_connection(lambda: Connection(where), sock=sock)
        except BaseException:
            sock.close()
            raise
        return connection
    assert last is not None
    raise _connect_failure(last, where)


async def start_tls(
    connection: Connection, context: ssl.SSLContext, host: str, where: str, stamps: Stamps
) -> None:
    """TLS on the connection (the server's certificate checked against `host`)."""
    loop = asyncio.get_running_loop()
    transport = connection.transport
    assert transport is not None
    try:
        tls = await loop.start_tls(transport, connection, context, server_hostname=host)
    except (OSError, ssl.SSLError, ConnectionError) as error:
        transport.abort()
        failure = ConnectionFailed(TLS, where, str(error) or type(error).__name__)
        raise failure from error
    except BaseException:
        transport.abort()
        raise
    if tls is None:  # the peer closed the connection during the handshake
        transport.abort()
        raise ConnectionFailed(
            TLS, where, "the server closed the connection during the TLS handshake"
        )
    connection.transport = tls
    stamps.append((TLS_PHASE, perf_counter()))


class _TunnelAnswer:
    """Reads the proxy's answer to CONNECT (a head; a 2xx answer to CONNECT has no body)."""

    def __init__(self, where: str) -> None:
        self.reader = HeadReader()
        self.head: ResponseHead | None = None
        self.where = where

    def data(self, data: bytes, at: float) -> bytes | None:
        try:
            done = self.reader.feed(data)
        except HeadError as error:
            raise ConnectionFailed(
                PROTOCOL, self.where, f"a bad answer to CONNECT: {error}"
            ) from None
        if done is None:
            return None
        self.head, rest = done
        return rest

    def end(self, at: float) -> None:
        raise ConnectionFailed(PROXY, self.where, "the proxy closed the connection on CONNECT")


async def tunnel(connection: Connection, origin: Origin, proxy: Proxy, stamps: Stamps) -> None:
    """A CONNECT tunnel through `proxy` to `origin`; a refusal names the proxy's answer."""
    where = proxy.origin.host_port
    lines = [f"CONNECT {origin.host_port} HTTP/1.1", f"Host: {origin.host_port}"]
    if proxy.authorization is not None:
        lines.append(f"Proxy-Authorization: {proxy.authorization}")
    await connection.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    answer = _TunnelAnswer(where)
    await connection.receive(answer)
    head = answer.head
    assert head is not None
    if not 200 <= head.status < 300:
        reason = f" {head.reason}" if head.reason else ""
        hint = (
            ": the proxy wants credentials (user:password@ in the proxy URL)"
            if head.status == 407
            else ""
        )
        raise ConnectionFailed(
            PROXY, where, f"the proxy answered HTTP {head.status}{reason} to CONNECT{hint}"
        )
    stamps.append((PROXY_TUNNEL_PHASE, perf_counter()))


async def connect(
    origin: Origin,
    proxy: Proxy | None,
    context: Callable[[], ssl.SSLContext],
    stamps: Stamps,
) -> Connection:
    """A connection ready for requests to `origin` (through `proxy` when given)."""
    hop = proxy.origin if proxy is not None else origin
    try:
        addresses = await resolve(hop, stamps)
        connection = await open_tcp(addresses, hop.host_port, stamps)
    except ConnectionFailed as failure:
        if proxy is None:
            raise
        raise _proxy_failure(failure, proxy) from failure.__cause__
    try:
        if proxy is not None and origin.scheme == "https":
            try:
                await tunnel(connection, origin, proxy, stamps)
            except ConnectionFailed as failure:
                raise _proxy_failure(failure, proxy) from failure.__cause__
        if origin.scheme == "https":
            await start_tls(connection, context(), origin.host, origin.host_port, stamps)
    except BaseException:
        connection.abort()
        raise
    return connection


def _proxy_failure(failure: ConnectionFailed, proxy: Proxy) -> ConnectionFailed:
    detail = failure.detail
    if failure.cause != PROXY:
        detail = f"cannot reach the proxy ({detail})"
    return ConnectionFailed(PROXY, f"{proxy.origin.host_port} (${proxy.source})", detail)
