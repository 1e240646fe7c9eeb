"""A response head (status line and header fields) read from bytes as they arrive, held to h11.

It accepts and refuses what h11 (the parser httpx reads with) accepts and refuses: lines end in
CRLF or a bare LF, the head ends at an empty line, the status line is `HTTP/d.d NNN reason` (the
reason may be missing), header fields are `token: value` with the value's surrounding spaces and
tabs dropped, a line starting with a space or tab continues the previous field (obsolete line
folding), Content-Length must be digits (several must agree) and Transfer-Encoding may only say
`chunked`. Informational heads (1xx but 101) are skipped, as a client does.

Two limits go further than h11, both far beyond an honest server: a head over MAX_HEAD_BYTES is
refused (h11 refuses one only while it is incomplete) and so is one with more than MAX_FIELDS
header fields (h11 has no count limit). Both bound what a hostile server can make the client
hold before it has said anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui.engine.http.headers import Headers

MAX_HEAD_BYTES = 64 * 1024
MAX_FIELDS = 256
# A CONTENT-LENGTH longer than this many digits is refused, as h11 refuses it.
MAX_LENGTH_DIGITS = 20

_VALUE_CHAR = rb"[^\x00\s]"  # a visible byte or obs-text (any non-whitespace byte but NUL)
_STATUS_LINE = re.compile(
    rb"HTTP/([0-9]\.[0-9]) ([0-9]{3})(?: ((?:[ \t]|" + _VALUE_CHAR + rb")*))?"
)
_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
_FIELD_VALUE = re.compile(rb"(?:" + _VALUE_CHAR + rb"+(?:[ \t]+" + _VALUE_CHAR + rb"+)*)?")
_DIGITS = re.compile(rb"[0-9]+")
_HEAD_END = re.compile(rb"\n\r?\n")
_FOLD = re.compile(rb"[ \t]+")


class HeadError(ValueError):
    """The head broke HTTP/1.1 or a limit; the message says how, in one line."""


@dataclass(frozen=True, slots=True)
class ResponseHead:
    http_version: str  # "1.1"
    status: int
    reason: str
    headers: Headers

    @property
    def keep_alive(self) -> bool:
        """Whether the connection may carry another request once this response is read."""
        return self.http_version >= "1.1" and "close" not in self.headers.tokens("connection")


def _shown(line: bytes | bytearray) -> str:
    text = repr(bytes(line[:40]))[2:-1]
    return text + ("…" if len(line) > 40 else "")


def parse_fields(lines: list[bytearray]) -> list[tuple[str, str]]:
    """Header fields (or a chunked body's trailer fields), obsolete line folding undone."""
    unfolded: list[bytearray] = []
    for line in lines:
        fold = _FOLD.match(line)
        if fold is not None:
            if not unfolded:
                raise HeadError("a continuation line before any header field")
            unfolded[-1] += b" " + line[fold.end() :]
        else:
            unfolded.append(line)
    if len(unfolded) > MAX_FIELDS:
        raise HeadError(f"more than {MAX_FIELDS} header fields")
    fields: list[tuple[str, str]] = []
    for line in unfolded:
        name, colon, value = bytes(line).partition(b":")
        value = value.strip(b" \t")
        if not colon or _TOKEN.fullmatch(name) is None or _FIELD_VALUE.fullmatch(value) is None:
            raise HeadError(f"an illegal header line: {_shown(line)}")
        fields.append((name.decode("ascii").lower(), value.decode("latin-1")))
    return fields


def parse_field_block(lines: list[bytearray]) -> list[tuple[str, str]]:
    """A block of header (or trailer) field lines, checked as h11 checks them."""
    return _checked(parse_fields(lines))


def _checked(fields: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Content-Length and Transfer-Encoding as h11 accepts them (values normalised)."""
    checked: list[tuple[str, str]] = []
    length: str | None = None
    seen_encoding = False
    for name, value in fields:
        if name == "content-length":
            lengths = {item.strip(" \t") for item in value.split(",")}
            if len(lengths) != 1:
                raise HeadError("conflicting Content-Length headers")
            value = lengths.pop()
            if _DIGITS.fullmatch(value.encode("latin-1")) is None:
                raise HeadError(f"a bad Content-Length: {value[:40]!r}")
            if len(value) > MAX_LENGTH_DIGITS:
                raise HeadError("a bad Content-Length: too many digits")
            if length is not None:
                if length != value:
                    raise HeadError("conflicting Content-Length headers")
                continue
            length = value
        elif name == "transfer-encoding":
            if seen_encoding:
                raise HeadError("several Transfer-Encoding headers")
            value = value.lower()
            if value != "chunked":
                raise HeadError(f"a Transfer-Encoding other than chunked: {value[:40]!r}")
            seen_encoding = True
        checked.append((name, value))
    return checked


def block_lines(block: bytes | bytearray) -> list[bytearray]:
    """The lines of a block that ends with its empty line (CRLF or LF), line ends removed."""
    lines = bytearray(block).split(b"\n")
    for line in lines:
        if line.endswith(b"\r"):
            del line[-1]
    del lines[-2:]  # the empty line that ended the block, and what followed its LF
    return lines


def parse_head(head: bytes | bytearray) -> ResponseHead:
    """One complete head (its empty line included) as a ResponseHead; HeadError if it is bad."""
    lines = block_lines(head)
    if not lines:
        raise HeadError("no status line")
    match = _STATUS_LINE.fullmatch(lines[0])
    if match is None:
        raise HeadError(f"an illegal status line: {_shown(lines[0])}")
    version, status, reason = match.group(1), int(match.group(2)), match.group(3) or b""
    if status < 100:
        raise HeadError(f"a status code below 100: {status}")
    fields = parse_field_block(lines[1:])
    return ResponseHead(version.decode(), status, reason.decode("latin-1"), Headers(fields))


def find_block_end(buffer: bytes | bytearray, start: int = 0, searched: int = 0) -> int:
    """Where a block of lines (a head, a trailer) starting at `start` ends, just past its empty
    line; -1 if it has not ended yet. A block that starts with its empty line is empty.
    `searched`: no end was found before this offset in an earlier call."""
    if buffer[start : start + 1] == b"\n":
        return start + 1
    if buffer[start : start + 2] == b"\r\n":
        return start + 2
    match = _HEAD_END.search(buffer, max(start, searched))
    return -1 if match is None else match.end()


class HeadReader:
    """Feed it a response's bytes in any pieces; it returns the final head and what followed."""

    __slots__ = ("_buffer", "_searched")

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._searched = 0  # the end was looked for up to here (a head arriving byte by byte)

    @property
    def held(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> tuple[ResponseHead, bytes] | None:
        """(head, the bytes after it) once a final head is complete, else None; HeadError for a
        head that breaks HTTP or a limit."""
        buffer = self._buffer
        buffer += data
        while buffer:
            if buffer[0] < 0x21:  # a status line never starts with a space or a control
                shown = _shown(buffer)
                raise HeadError(f"a response that does not start with a status line: {shown}")
            end = find_block_end(buffer, 0, self._searched)
            if end < 0:
                if len(buffer) > MAX_HEAD_BYTES:
                    raise HeadError(f"a response head longer than {MAX_HEAD_BYTES // 1024} KiB")
                self._searched = max(0, len(buffer) - 2)
                return None
            self._searched = 0
            if end > MAX_HEAD_BYTES:
                raise HeadError(f"a response head longer than {MAX_HEAD_BYTES // 1024} KiB")
            if end <= 2:  # an empty line where the status line should be
                raise HeadError("no status line")
            head = parse_head(buffer[:end])
            del buffer[:end]
            if head.status >= 200:
                rest = bytes(buffer)
                buffer.clear()
                return head, rest
            if head.status == 101:
                raise HeadError("the server switched protocols (101), which was not asked for")
            # 100 Continue, 102, 103 Early Hints: the final head follows.
        return None
