"""Server-sent events split from the response bytes as they arrive: only what a chat stream needs.

The SDK decodes every event into a `ServerSentEvent` and then a pydantic `ChatCompletionChunk`,
a cost paid per token; here an event is just the bytes of its data, which
`json.loads` takes as they are. The rules are the HTML standard's event-stream interpretation,
as far as the data goes: lines end in LF, CRLF or CR (a CR ends its line at once; an LF right
after it, even in the next read, is skipped), a leading byte order mark is dropped, a blank line
ends an event, several `data:` lines join with LF, one space after the colon is dropped, `data`
without a colon is an empty data line, comments (`:...`) and the other fields (`event:`, `id:`,
`retry:`) are ignored, an event with no data line is not dispatched, and an event still open
when the body ends is dropped. Every event's data is returned whatever its `event:` name, as the
SDK reads them: OpenAI-compatible servers name none of their chat events.

One addition: llama.cpp's server before late 2025 reports a failure mid-stream as a line
`error: {...}`, a field the standard ignores, and then sends `data: [DONE]`, so the reply would
end as if complete with its cause lost. Such a line becomes an event of its own, `{"error": ...}`,
the form other servers use.

Limits bound what a body that never ends its line or its event can make the client hold: see
MAX_LINE, MAX_EVENT_DATA and MAX_EVENT_LINES. Breaking one raises EventStreamError.
"""

from __future__ import annotations

import json

# The largest honest event is a whole reply sent as one chunk (servers that fake streaming do
# that): 128k output tokens are about 0.5 MB of text, at most ~3 MB as JSON with every character
# escaped. So 4 MiB for one line and for one event's data is generous, and it bounds the buffer.
MAX_LINE = 4 << 20
MAX_EVENT_DATA = 4 << 20
# Each data line is a Python object (~50 bytes beyond its text): a chat chunk has one data line,
# a pretty-printed one a few dozen.
MAX_EVENT_LINES = 10_000

_BOM = b"\xef\xbb\xbf"


class EventStreamError(ValueError):
    """The body broke one of the limits above; the message says which, in one line.

    `events`: the data of the events completed before the break, which a reader still gets."""

    def __init__(self, message: str, events: list[bytes]) -> None:
        super().__init__(message)
        self.events = events


class EventSplitter:
    """Feed it the body's bytes in any pieces; it returns the data of each completed event."""

    __slots__ = (
        "_at_start",
        "_data",
        "_data_size",
        "_max_data",
        "_max_line",
        "_max_lines",
        "_skip_lf",
        "_tail",
    )

    def __init__(
        self,
        *,
        max_line: int = MAX_LINE,
        max_event_data: int = MAX_EVENT_DATA,
        max_event_lines: int = MAX_EVENT_LINES,
    ) -> None:
        self._tail: bytes | bytearray = b""  # the unfinished last line of what was fed so far
        self._data: list[bytes] = []  # the data lines of the event being received
        self._data_size = 0  # their bytes
        self._skip_lf = False  # the last piece ended in CR: an LF next is that CRLF's second half
        self._at_start = True  # no line ended yet: the first may start with a byte order mark
        self._max_line = max_line
        self._max_data = max_event_data
        self._max_lines = max_event_lines

    @property
    def held(self) -> tuple[int, int]:
        """(bytes, data lines) kept between feeds: the open line, the open event's data."""
        return len(self._tail) + self._data_size, len(self._data)

    def feed(self, chunk: bytes) -> list[bytes]:
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]
        tail = self._tail
        if tail:
            if b"\n" not in chunk and b"\r" not in chunk:
                return self._extend_line(chunk)
            chunk = tail + chunk if type(tail) is bytes else b"".join((tail, chunk))
        if b"\r" in chunk:
            # A CR ends its line at once (no waiting for a possible LF: the event is stamped now).
            self._skip_lf = chunk.endswith(b"\r")
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = chunk.split(b"\n")
        tail = lines.pop()
        if self._at_start and lines:
            self._at_start = False
            if lines[0].startswith(_BOM):
                lines[0] = lines[0][3:]
        if len(chunk) > self._max_line:  # only then can a line here be too long
            return self._take_checked(lines, tail)
        self._tail = tail
        return self._take(lines)

    def _take(self, lines: list[bytes]) -> list[bytes]:
        events: list[bytes] = []
        data = self._data
        size = self._data_size
        max_data, max_lines = self._max_data, self._max_lines
        for line in lines:
            if line:
                if line.startswith(b"data:"):
                    value = line[6:] if line.startswith(b"data: ") else line[5:]
                    size += len(value)
                    if size > max_data or len(data) >= max_lines:
                        self._data_size = size - len(value)
                        raise EventStreamError(self._too_big(size), events)
                    data.append(value)
                elif line == b"data":  # a field without a colon has an empty value
                    if len(data) >= max_lines:
                        self._data_size = size
                        raise EventStreamError(self._too_big(size), events)
                    data.append(b"")
                elif line.startswith(b"error:"):
                    value = line[7:] if line.startswith(b"error: ") else line[6:]
                    events.append(_error_event(value))
            elif data:
                events.append(data[0] if len(data) == 1 else b"\n".join(data))
                data.clear()
                size = 0
        self._data_size = size
        return events

    def _take_checked(self, lines: list[bytes], tail: bytes) -> list[bytes]:
        """_take, for a piece long enough to hold a line over the limit: up to that line."""
        limit = self._max_line
        too_long = next((i for i, line in enumerate(lines) if len(line) > limit), None)
        if too_long is not None:
            events = self._take(lines[:too_long])
            raise EventStreamError(self._line_too_long(), events)
        events = self._take(lines)
        if len(tail) > limit:
            raise EventStreamError(self._line_too_long(), events)
        self._tail = tail
        return events

    def _extend_line(self, piece: bytes) -> list[bytes]:
        """A piece with no line end: the open line grows (in place: no copy of it per piece)."""
        tail = self._tail
        if len(tail) + len(piece) > self._max_line:
            raise EventStreamError(self._line_too_long(), [])
        if type(tail) is bytes:
            tail = self._tail = bytearray(tail)
        tail += piece
        return []

    def _line_too_long(self) -> str:
        return f"an SSE line longer than {_size(self._max_line)}"

    def _too_big(self, size: int) -> str:
        if size > self._max_data:
            return f"an SSE event with more than {_size(self._max_data)} of data"
        return f"an SSE event with more than {self._max_lines:,} data lines"


def _size(count: int) -> str:
    return f"{count >> 20} MiB" if count >= 1 << 20 and count % (1 << 20) == 0 else f"{count} bytes"


def _error_event(value: bytes) -> bytes:
    """The event an `error:` line stands for: {"error": value}, the value kept as JSON when it is
    JSON (llama.cpp sends an object with a message), else as the message."""
    try:
        json.loads(value)
    except ValueError:
        return json.dumps({"error": {"message": value.decode(errors="replace")}}).encode()
    return b'{"error":' + value + b"}"
