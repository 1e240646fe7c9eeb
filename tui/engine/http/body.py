"""A response body taken apart as its bytes arrive: its framing (a length, chunked coding, or up
to the close), its content coding (gzip or deflate, though the client asks for none), and the
decoded bytes handed to a sink with their arrival time, all inside the connection's receive
callback (connection.py): no task switch per packet.

Framing follows h11 (RFC 9112 section 6.3 as h11 reads it): a 204 or 304 answer and the answer
to HEAD have no body; Transfer-Encoding: chunked wins over Content-Length; with neither, the
body runs to the close (and the connection cannot be kept). The chunked coding is decoded by
chunked_body.py up to the last chunk, whose trailer is read here, as h11 reads it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import NamedTuple, Protocol

from tui.engine.http.chunked import ChunkedBodyError, ChunkedDecoder
from tui.engine.http.errors import CLOSED, BodyRefused, ConnectionFailed
from tui.engine.http.response_head import (
    MAX_HEAD_BYTES,
    HeadError,
    ResponseHead,
    block_lines,
    find_block_end,
    parse_field_block,
)

# Takes decoded body bytes and the time they arrived; True: it wants no more (the rest of the
# body is still read, so the connection can be kept, but no longer handed over).
Sink = Callable[[bytes, float], bool]

# A decoded whole body (JSON, an error page) is refused past this size: a chat reply is far
# smaller, and a compressed body must not be allowed to expand without bound.
MAX_DECODED_BODY = 64 << 20


class Framing(NamedTuple):
    kind: str  # "length", "chunked" or "close"
    length: int = 0


NO_BODY = Framing("length", 0)


def framing_of(head: ResponseHead, method: str) -> Framing:
    if head.status in (204, 304) or method == "HEAD":
        return NO_BODY
    if head.headers.get("transfer-encoding") is not None:  # only "chunked" passes the head
        return Framing("chunked")
    length = head.headers.get("content-length")
    if length is not None:
        return Framing("length", int(length))
    return Framing("close")


class _Framer(Protocol):
    def feed(self, data: bytes) -> tuple[list[bytes], bytes | None]: ...
    def end(self) -> None: ...


class LengthBody:
    """A body of a known length; the bytes after it are handed back."""

    __slots__ = ("_remaining", "_where")

    def __init__(self, length: int, where: str) -> None:
        self._remaining = length
        self._where = where

    def feed(self, data: bytes) -> tuple[list[bytes], bytes | None]:
        remaining = self._remaining
        if len(data) < remaining:
            self._remaining = remaining - len(data)
            return [data], None
        self._remaining = 0
        return ([data[:remaining]] if remaining else []), data[remaining:]

    def end(self) -> None:
        if self._remaining:
            raise ConnectionFailed(
                CLOSED,
                self._where,
                f"the server closed the connection {self._remaining} bytes before the end "
                "of the body",
            )


class CloseBody:
    """A body that runs until the server closes the connection."""

    __slots__ = ()

    def feed(self, data: bytes) -> tuple[list[bytes], bytes | None]:
        return [data], None

    def end(self) -> None:
        return None


class ChunkedBody:
    """Chunked coding: chunk data as it comes, then the last chunk's trailer, as h11 reads it."""

    __slots__ = ("_decoder", "_searched", "_tail", "_where")

    def __init__(self, where: str) -> None:
        self._decoder: ChunkedDecoder | None = ChunkedDecoder()
        self._tail = bytearray()  # from the last chunk's size line on, until the trailer ends
        self._searched = 0
        self._where = where

    def feed(self, data: bytes) -> tuple[list[bytes], bytes | None]:
        decoder = self._decoder
        if decoder is None:
            return [], self._trailer(data)
        pieces, rest = decoder.feed(data)
        if rest is None:
            return pieces, None
        self._decoder = None
        # The last chunk's size line was read whole by the decoder: the trailer starts after it.
        try:
            return pieces, self._trailer(rest[rest.index(b"\r\n") + 2 :])
        except ChunkedBodyError as error:
            error.pieces = pieces  # the data before the bad trailer still counts
            raise

    def _trailer(self, data: bytes) -> bytes | None:
        tail = self._tail
        tail += data
        end = find_block_end(tail, 0, self._searched)
        if end < 0:
            if len(tail) > MAX_HEAD_BYTES:
                raise ChunkedBodyError(f"a trailer longer than {MAX_HEAD_BYTES // 1024} KiB")
            self._searched = max(0, len(tail) - 2)
            return None
        try:
            parse_field_block(block_lines(tail[:end]))
        except HeadError as error:
            raise ChunkedBodyError(f"a bad trailer: {error}") from None
        return bytes(tail[end:])

    def end(self) -> None:
        raise ConnectionFailed(
            CLOSED, self._where, "the server closed the connection before the end of the body"
        )


def framer(framing: Framing, where: str) -> _Framer:
    if framing.kind == "chunked":
        return ChunkedBody(where)
    if framing.kind == "length":
        return LengthBody(framing.length, where)
    return CloseBody()


class ContentDecoder:
    """gzip / deflate (in the order the server applied them) undone piece by piece, bounded."""

    def __init__(self, codings: list[str], where: str) -> None:
        self._where = where
        self._steps: list[_Inflate] = []
        for coding in reversed(codings):
            if coding in ("gzip", "x-gzip"):
                self._steps.append(_Inflate("gzip", zlib.MAX_WBITS | 16))
            elif coding == "deflate":
                self._steps.append(_Inflate("deflate", zlib.MAX_WBITS, raw_fallback=True))
            elif coding != "identity":
                raise BodyRefused(
                    where, f"a body in {coding[:20]!r} coding, which was not asked for"
                )

    @property
    def active(self) -> bool:
        return bool(self._steps)

    def decode(self, data: bytes) -> bytes:
        return self._through_steps(data, finish=False)

    def flush(self) -> bytes:
        """What is left once the body has ended; BodyRefused when a compressed stream stopped
        before its own end (the body was cut: what came is not the whole of it)."""
        data = self._through_steps(b"", finish=True)
        for step in self._steps:
            if not step.ended:
                raise BodyRefused(self._where, f"a {step.name} body cut off before its end")
        return data

    def _through_steps(self, data: bytes, *, finish: bool) -> bytes:
        """`data` through every step in turn (each step's remaining output too when the body
        has ended); a zlib error or a body past its limit is BodyRefused."""
        try:
            for step in self._steps:
                data = step.decode(data)
                if finish:
                    data += step.finish()
        except zlib.error as error:
            raise BodyRefused(
                self._where, f"a compressed body that does not decode ({error})"
            ) from None
        except OverflowError:
            raise BodyRefused(self._where, _OVERSIZED) from None
        return data


_OVERSIZED = f"a compressed body that expands past {MAX_DECODED_BODY >> 20} MiB"


class _Inflate:
    """One zlib stream; deflate may come raw (without the zlib header), as some servers send it.
    Never expands past MAX_DECODED_BODY, not even inside one call (a small bomb)."""

    def __init__(self, name: str, wbits: int, raw_fallback: bool = False) -> None:
        self.name = name
        self._object = zlib.decompressobj(wbits)
        self._raw_fallback = raw_fallback
        self._started = False
        self._out = 0

    @property
    def ended(self) -> bool:
        return self._object.eof or not self._started

    def decode(self, data: bytes) -> bytes:
        if not data:
            return b""
        room = MAX_DECODED_BODY - self._out + 1
        try:
            out = self._object.decompress(data, room)
        except zlib.error:
            if not self._raw_fallback or self._started:
                raise
            self._object = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self._object.decompress(data, room)
        self._started = True
        self._out += len(out)
        if self._out > MAX_DECODED_BODY or self._object.unconsumed_tail:
            raise OverflowError
        return out

    def finish(self) -> bytes:
        out = self._object.flush()
        self._out += len(out)
        if self._out > MAX_DECODED_BODY:
            raise OverflowError
        return out


def content_decoder(head: ResponseHead, where: str) -> ContentDecoder | None:
    codings = head.headers.tokens("content-encoding")
    if not codings or codings == ["identity"]:
        return None
    return ContentDecoder(codings, where)


class BodyReceiver:
    """Receives one response body for a Connection: framing, then content coding, then `sink`.

    `data` returns None while the body goes on, or the bytes after it once it has ended; `end`
    is told the connection ended (fine for a body that runs to the close, an error otherwise).
    """

    __slots__ = ("_content", "_feed", "_framer", "_sink", "_wanted", "_where")

    def __init__(
        self, framing: Framing, content: ContentDecoder | None, sink: Sink, where: str
    ) -> None:
        self._framer = framer(framing, where)
        self._feed = self._framer.feed
        self._content = content
        self._sink = sink
        self._wanted = True
        self._where = where

    def data(self, data: bytes, at: float) -> bytes | None:
        try:
            pieces, rest = self._feed(data)
        except ChunkedBodyError as error:
            self._deliver(error.pieces, at)  # what came before the break, as h11 hands it over
            raise BodyRefused(self._where, str(error)) from error
        if pieces:
            if len(pieces) == 1 and self._content is None and self._wanted:
                # A streamed reply's usual packet: one chunk of plain bytes.
                self._wanted = not self._sink(pieces[0], at)
            else:
                self._deliver(pieces, at)
        if rest is not None:
            self._finish(at)
        return rest

    def end(self, at: float) -> None:
        self._framer.end()
        self._finish(at)

    def _finish(self, at: float) -> None:
        content = self._content
        if content is not None and self._wanted:
            tail = content.flush()
            if tail:
                self._wanted = not self._sink(tail, at)

    def _deliver(self, pieces: list[bytes], at: float) -> None:
        if not self._wanted:
            return
        data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        if self._content is not None:
            data = self._content.decode(data)
        if data:
            self._wanted = not self._sink(data, at)


class Collector:
    """A sink that keeps a whole body (up to a limit: past it, `overflowed` and no more kept)."""

    __slots__ = ("_limit", "data", "last_at", "overflowed")

    def __init__(self, limit: int = MAX_DECODED_BODY) -> None:
        self.data = bytearray()
        self.last_at = 0.0
        self._limit = limit
        self.overflowed = False

    def __call__(self, data: bytes, at: float) -> bool:
        self.last_at = at
        room = self._limit - len(self.data)
        if len(data) > room:
            self.data += data[:room]
            self.overflowed = True
            return True
        self.data += data
        return False
