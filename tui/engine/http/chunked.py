"""HTTP/1.1 chunked transfer coding, decoded as the bytes arrive: what a streamed reply's body is.

The client reads every body itself, inside the connection's receive callback (http/body.py),
so this decoder runs once per network packet. It stops at the last chunk (size 0) and hands
back everything from that chunk's size line on; http/body.py reads the trailer after it, as h11
reads it, so the connection can be kept for the next request.

It accepts and refuses the same size lines as h11 (the parser the property tests hold it to).
Two limits go further than h11, both far beyond anything a server sends: a size line over
MAX_SIZE_LINE bytes and a chunk over MAX_CHUNK_SIZE bytes are refused as soon as they are seen.
"""

from __future__ import annotations

import re

# h11's size line: 1 to 20 hex digits, then an extension from ";" to the end of the line (ignored,
# as every client does) and optional spaces or tabs. No space before the digits or before ";".
_SIZE = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;[^\n]*)?[ \t]*")
# A size line longer than this is not a size line: refused whether or not its CRLF has come, so
# an unfinished one never holds more than this.
MAX_SIZE_LINE = 4096
# A streamed chat reply's chunks are a few hundred bytes; even a whole reply re-chunked by a
# buffering proxy is megabytes. A size over this is garbage (or hostile), not data worth reading.
MAX_CHUNK_SIZE = 1 << 30


class ChunkedBodyError(Exception):
    """The body broke the chunked coding (a bad size line, data not followed by CRLF).

    The message says what was wrong in one line. `pieces`: the data the same feed decoded before
    the break, which a reader still gets (as h11 hands over every chunk before a broken one)."""

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

    @property
    def held(self) -> int:
        """Bytes kept between feeds (never more than MAX_SIZE_LINE)."""
        return len(self._pending)

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
                        raise ChunkedBodyError(_TOO_LONG)
                    self._pending = buffer[position:]
                    break
                if line_end - position > MAX_SIZE_LINE:
                    raise ChunkedBodyError(_TOO_LONG)
                match = _SIZE.fullmatch(buffer, position, line_end)
                if match is None:
                    line = buffer[position:line_end]
                    shown = repr(line[:32])[1:] + ("…" if len(line) > 32 else "")
                    raise ChunkedBodyError(f"a chunk size line that is not a hex size: {shown}")
                size = int(match.group(1), 16)
                if size == 0:
                    return pieces, buffer[position:]
                if size > MAX_CHUNK_SIZE:
                    raise ChunkedBodyError(f"a chunk size of {size:#x} bytes, {_TOO_BIG}")
                self._remaining = size
                position = line_end + 2
        return pieces, None


_TOO_LONG = f"a chunk size line longer than {MAX_SIZE_LINE} bytes"
_TOO_BIG = f"over the {MAX_CHUNK_SIZE >> 30} GiB limit"
