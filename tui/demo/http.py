"""A minimal, strict HTTP/1.1 layer for the demo endpoint (stdlib asyncio streams only).

Reads one request at a time (request line, headers, a Content-Length or chunked body, and
`Expect: 100-continue`), and frames responses: fixed bodies with Content-Length, streams with
chunked transfer so keep-alive survives an SSE response (HTTP/1.0 clients get close framing).
Anything malformed raises HttpError, which the server answers with a plain 400-class page.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus

MAX_BODY_BYTES = 64 * 1024 * 1024  # a 100k-token prompt is well under 1 MB
MAX_HEADERS = 100
SERVER_NAME = "firsttoken-demo"

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_VERSION = re.compile(r"^HTTP/1\.[01]$")


class HttpError(Exception):
    """A request we cannot serve; status and a one-line reason for the error page."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    path: str  # target without the query string
    version: str  # "HTTP/1.1" or "HTTP/1.0"
    headers: dict[str, str]  # lower-case names; repeated headers joined with ", "
    body: bytes

    @property
    def keep_alive(self) -> bool:
        tokens = {t.strip().lower() for t in self.headers.get("connection", "").split(",")}
        if self.version == "HTTP/1.0":
            return "keep-alive" in tokens
        return "close" not in tokens

    @property
    def chunked_ok(self) -> bool:
        """Chunked responses are an HTTP/1.1 feature."""
        return self.version == "HTTP/1.1"


async def _line(reader: asyncio.StreamReader) -> bytes:
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.LimitOverrunError as e:
        raise HttpError(431, "request line or header too long") from e
    return line.rstrip(b"\r\n")


async def read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> Request | None:
    """The next request on the connection, or None when the client closed it between requests.

    Raises HttpError for a malformed request and asyncio.IncompleteReadError when the client
    goes away in the middle of one.
    """
    try:
        first = await _line(reader)
        while not first:  # RFC 9112 2.2: ignore empty lines before a request line
            first = await _line(reader)
    except asyncio.IncompleteReadError as e:
        if e.partial.strip():
            raise
        return None
    try:
        method, target, version = first.decode("ascii").split(" ")
    except (UnicodeDecodeError, ValueError) as e:
        raise HttpError(400, "malformed request line") from e
    if not _TOKEN.match(method) or not target or not _VERSION.match(version):
        raise HttpError(400, "malformed request line")
    if not (target.startswith("/") or target == "*"):
        raise HttpError(400, "request target must be a path")

    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        raw = await _line(reader)
        if not raw:
            break
        name, sep, value = raw.partition(b":")
        try:
            key, text = name.decode("ascii"), value.decode("latin-1").strip()
        except UnicodeDecodeError as e:
            raise HttpError(400, "malformed header") from e
        if not sep or not _TOKEN.match(key):
            raise HttpError(400, "malformed header")
        key = key.lower()
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    else:
        raise HttpError(431, "too many headers")
    if version == "HTTP/1.1" and "host" not in headers:
        raise HttpError(400, "missing Host header")

    body = await _read_body(reader, writer, headers, version)
    path = target.split("?", 1)[0]
    return Request(method.upper(), target, path, version, headers, body)


async def _read_body(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    headers: dict[str, str],
    version: str,
) -> bytes:
    encoding = headers.get("transfer-encoding")
    length_text = headers.get("content-length")
    if encoding is not None and length_text is not None:
        raise HttpError(400, "both Transfer-Encoding and Content-Length")  # smuggling guard
    if encoding is None and length_text is None:
        return b""
    if encoding is not None and encoding.strip().lower() != "chunked":
        raise HttpError(501, f"unsupported Transfer-Encoding {encoding!r}")
    length = 0
    if length_text is not None:
        if not length_text.isdigit():
            raise HttpError(400, "malformed Content-Length")
        length = int(length_text)
        if length > MAX_BODY_BYTES:
            raise HttpError(413, "request body too large")
    # curl sends Expect: 100-continue for bodies over 1 KiB and waits a second without this.
    if version == "HTTP/1.1" and headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if encoding is None:
        return await reader.readexactly(length)
    return await _read_chunked(reader)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        size_text = (await _line(reader)).split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError as e:
            raise HttpError(400, "malformed chunk size") from e
        if size == 0:
            while await _line(reader):  # trailer fields, ignored
                pass
            return b"".join(parts)
        total += size
        if total > MAX_BODY_BYTES:
            raise HttpError(413, "request body too large")
        parts.append(await reader.readexactly(size))
        if await _line(reader):
            raise HttpError(400, "malformed chunk")


def response_head(
    status: int, headers: Iterable[tuple[str, str]], *, keep_alive: bool = True
) -> bytes:
    """Status line and headers; the caller adds Content-Length or Transfer-Encoding."""
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", f"Server: {SERVER_NAME}"]
    lines.extend(f"{name}: {value}" for name, value in headers)
    if not keep_alive:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def full_response(
    status: int,
    body: bytes,
    content_type: str,
    *,
    keep_alive: bool = True,
    extra: Iterable[tuple[str, str]] = (),
    head_only: bool = False,
) -> bytes:
    headers = [("Content-Type", content_type), ("Content-Length", str(len(body))), *extra]
    head = response_head(status, headers, keep_alive=keep_alive)
    return head if head_only else head + body


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body (data must not be empty: that would end the body)."""
    return b"%x\r\n%b\r\n" % (len(data), data)


LAST_CHUNK = b"0\r\n\r\n"


def error_page(status: int, reason: str, *, keep_alive: bool = False) -> bytes:
    """A plain HTML page, as a website (not an API) answers a wrong path."""
    phrase = HTTPStatus(status).phrase
    page = (
        f"<!doctype html><title>{status} {phrase}</title>"
        f"<h1>{status} {phrase}</h1><p>{html.escape(reason)}</p>\n"
    ).encode()
    return full_response(status, page, "text/html; charset=utf-8", keep_alive=keep_alive)
