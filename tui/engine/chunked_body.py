"""HTTP/1.1 chunked transfer coding, decoded as the bytes arrive: what a streamed reply's body is.

The client reads a streamed body itself (client_body.py) instead of through httpx, httpcore and
h11, whose six layers of async generators and two parser calls per network packet were about a
fifth of the client's CPU on a long reply. This decoder stops at the last chunk (size 0) and hands
back everything from that chunk's size line on, so h11 can read the end of the message itself and
httpcore keeps the connection for the next request.
"""

from __future__ import annotations

import re

# A size line is hex digits, then optional extensions after ";" (ignored, as every client does).
_SIZE = re.compile(rb"[ \t]*([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?")
# A size line longer than this is not a size line (h11 allows about as much).
MAX_SIZE_LINE = 4096


class ChunkedBodyError(Exception):
    """The body broke the chunked coding (a bad size line, data not followed by CRLF).

    `pieces`: the data the same feed decoded before the break, which a reader still gets
    (as h11 hands over every chunk before a broken one)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.pieces: list[bytes] = []


class ChunkedDecoder:
    """Feed it the body's bytes in any pieces; it returns the chunk data they complete."""

    __slots__ = ("_after_data", "_pending", "_remaining")

    def __init__(self) -> None:
        self._pending = b""  # an unfinished size line, or the first byte of a data's CRLF
        self._remaining = 0  # bytes of the current chunk's data still to come
        self._after_data = False  # a chunk's data ended: its CRLF comes next

    def feed(self, data: bytes) -> tuple[list[bytes], bytes | None]:
        """(data pieces, end): `end` is None while the body goes on; at the last chunk it is the
        bytes from that chunk's size line on (its trailer and what follows, never decoded here).
        """
        pieces: list[bytes] = []
        try:
            return self._decode(data, pieces)
        except ChunkedBodyError as error:
            error.pieces = pieces
            raise

    def _decode(self, data: bytes, pieces: list[bytes]) -> tuple[list[bytes], bytes | None]:
        buffer = self._pending + data if self._pending else data
        self._pending = b""
        position, length = 0, len(buffer)
        while position < length:
            if self._remaining:
                end = min(length, position + self._remaining)
                pieces.append(buffer[position:end])
                self._remaining -= end - position
                self._after_data = self._remaining == 0
                position = end
            elif self._after_data:
                if length - position < 2:
                    if buffer[position:] != b"\r":
                        raise ChunkedBodyError("chunk data not followed by CRLF")
                    self._pending = buffer[position:]
                    break
                if buffer[position : position + 2] != b"\r\n":
                    raise ChunkedBodyError("chunk data not followed by CRLF")
                position += 2
                self._after_data = False
            else:
                line_end = buffer.find(b"\r\n", position)
                if line_end < 0:
                    if length - position > MAX_SIZE_LINE:
                        raise ChunkedBodyError("chunk size line too long")
                    self._pending = buffer[position:]
                    break
                match = _SIZE.fullmatch(buffer, position, line_end)
                if match is None:
                    raise ChunkedBodyError(f"bad chunk size line {buffer[position:line_end]!r}")
                size = int(match.group(1), 16)
                if size == 0:
                    return pieces, buffer[position:]
                self._remaining = size
                position = line_end + 2
        return pieces, None
