"""firsttoken's SSE splitter held to the HTML standard's event-stream interpretation.

The reference below is that section of the standard written out plainly and slowly, on the
whole stream at once: decode as UTF-8 (one leading BOM dropped), split lines at CRLF, LF or CR,
then per line: blank dispatches, `:` starts a comment, else a field name up to the first colon
and a value after it (one leading space dropped; no colon: the whole line is the name, the value
empty); `event`, `data`, `id` and `retry` are the fields; dispatch skips an event whose data
buffer is empty and drops the data's last LF; what is left unfinished at the end is discarded.

firsttoken's client uses the data of each event, in order, whatever the event's name (as the
openai SDK does; OpenAI-compatible servers name none of their chat events), so that is what is
compared: the splitter's events, decoded, against the reference's `data` of every event.

Deliberate difference, not generated here (tested on its own): a line `error: ...` becomes an
event `{"error": ...}` (llama.cpp's servers before late 2025 report a failure mid-stream that
way; the standard ignores the unknown field and the reply would end looking complete).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.engine.chat.sse import EventSplitter, EventStreamError

PROPERTY = settings(
    derandomize=True,
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# -- the reference -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    type: str
    data: str
    last_event_id: str


@dataclass
class Parsed:
    events: list[Event] = field(default_factory=list)
    reconnection_ms: int | None = None  # what `retry:` set last
    refused: bool = False  # a limit was broken (only when limits were given)


@dataclass(frozen=True)
class Limits:
    """firsttoken's limits, applied the way it applies them: a line (the unfinished last one
    too) longer than `line` bytes, or a data line that takes its event's data over `data` bytes
    or `lines` lines, stops the parse; the events dispatched before it stand."""

    line: int
    data: int
    lines: int


def lines_of(text: str) -> tuple[list[str], str]:
    """(the complete lines, the unfinished rest): lines end at CRLF, at LF, or at a CR not
    followed by LF."""
    lines, current, i = [], "", 0
    while i < len(text):
        char = text[i]
        if char == "\r":
            lines.append(current)
            current = ""
            if text[i + 1 : i + 2] == "\n":
                i += 1
        elif char == "\n":
            lines.append(current)
            current = ""
        else:
            current += char
        i += 1
    return lines, current


def standard_parse(stream: bytes, limits: Limits | None = None) -> Parsed:
    text = stream.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines, unfinished = lines_of(text)
    parsed = Parsed()
    data_buffer, event_type, last_event_id = "", "", ""
    data_bytes = data_lines = 0  # only for the limits
    for line in lines:
        if limits is not None and len(line.encode()) > limits.line:
            parsed.refused = True
            return parsed
        if line == "":
            # Dispatch. The last event ID is set whether or not anything is dispatched.
            if data_buffer == "":
                data_buffer, event_type = "", ""
                data_bytes = data_lines = 0
                continue
            if data_buffer.endswith("\n"):
                data_buffer = data_buffer[:-1]
            parsed.events.append(Event(event_type or "message", data_buffer, last_event_id))
            data_buffer, event_type = "", ""
            data_bytes = data_lines = 0
            continue
        if line.startswith(":"):
            continue  # a comment
        if ":" in line:
            name, value = line.split(":", 1)
            if value.startswith(" "):
                value = value[1:]
        else:
            name, value = line, ""
        if name == "event":
            event_type = value
        elif name == "data":
            data_buffer += value + "\n"
            data_bytes += len(value.encode())
            data_lines += 1
            if limits is not None and (data_bytes > limits.data or data_lines > limits.lines):
                parsed.refused = True
                return parsed
        elif name == "id":
            if "\0" not in value:
                last_event_id = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            parsed.reconnection_ms = int(value)
        # any other field is ignored
    if limits is not None and len(unfinished.encode()) > limits.line:
        parsed.refused = True
    return parsed  # the unfinished line and an undispatched event are discarded


def test_the_reference_reads_the_standards_own_examples() -> None:
    def datas(stream: bytes) -> list[str]:
        return [event.data for event in standard_parse(stream).events]

    assert datas(b"data: YHOO\ndata: +2\ndata: 10\n\n") == ["YHOO\n+2\n10"]
    # Four blocks: the first an empty event... the last discarded (no blank line after it).
    assert datas(b"data\n\ndata\ndata\n\ndata:") == ["", "\n"]
    assert datas(b"data:test\n\ndata: test\n\n") == ["test", "test"]
    parsed = standard_parse(
        b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
        b"data:  third event\n\n"
    )
    assert [(e.data, e.last_event_id) for e in parsed.events] == [
        ("first event", "1"),
        ("second event", ""),
        (" third event", ""),
    ]
    parsed = standard_parse(b"event: add\ndata: 73857293\nretry: 3000\n\nretry: x\n\n")
    assert [(e.type, e.data) for e in parsed.events] == [("add", "73857293")]
    assert parsed.reconnection_ms == 3000


# -- firsttoken against it ---------------------------------------------------------------------


def split(pieces: list[bytes], splitter: EventSplitter | None = None) -> list[str]:
    splitter = splitter or EventSplitter()
    return [event.decode("utf-8", errors="replace") for p in pieces for event in splitter.feed(p)]


def pieces_of(stream: bytes, cuts: list[int]) -> list[bytes]:
    """`stream` cut at `cuts` (repeats give empty pieces, which a reader may see too)."""
    edges = [0, *sorted(cuts), len(stream)]
    return [stream[a:b] for a, b in pairwise(edges)]


LINE_ENDS = st.sampled_from([b"\n", b"\r\n", b"\r"])
VALUES = st.one_of(
    st.text(
        alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"),
        max_size=12,
    ).map(str.encode),
    st.binary(max_size=12).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"")),
    st.sampled_from([b"", b" ", b"  x", b":", b"a: b", b"[DONE]", b'{"a": 1}', b"\xef\xbb\xbf"]),
)
# Field names that are not data: case, spaces, prefixes; never "error" (see the docstring).
OTHER_NAMES = st.sampled_from(
    [b"Data", b"DATA", b"data ", b" data", b"dat", b"datas", b"database", b"foo", b"ev", b""]
)


@st.composite
def stream_lines(draw: st.DrawFn) -> bytes:
    kind = draw(
        st.sampled_from(
            ["data"] * 5 + ["blank"] * 3 + ["no colon", "comment", "event", "id", "retry", "other"]
        )
    )
    if kind == "data":
        return draw(st.sampled_from([b"data:", b"data: ", b"data:  "])) + draw(VALUES)
    if kind == "blank":
        return b""
    if kind == "no colon":
        return draw(st.sampled_from([b"data", b"event", b"id", b"retry"]))
    if kind == "comment":
        return b":" + draw(VALUES)
    if kind == "event":
        return b"event:" + draw(st.sampled_from([b"", b" "])) + draw(VALUES)
    if kind == "id":
        return b"id: " + draw(st.sampled_from([b"7", b"a\x00b", b""]))
    if kind == "retry":
        return b"retry: " + draw(st.sampled_from([b"3000", b"x", b"", b"-1", b"1.5"]))
    return draw(OTHER_NAMES) + draw(st.sampled_from([b"", b":", b": "])) + draw(VALUES)


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(stream_lines(), max_size=14))
    stream = b"".join(line + draw(LINE_ENDS) for line in lines)
    if draw(st.booleans()):  # ends in the middle of a line
        stream += draw(st.sampled_from([b"data: cut", b"da", b":"]))
    if draw(st.integers(0, 5)) == 0:
        stream = b"\xef\xbb\xbf" + stream
    return stream


def cuts_for(stream: bytes) -> st.SearchStrategy[list[int]]:
    return st.one_of(
        st.lists(st.integers(0, len(stream)), max_size=10),
        st.just(list(range(1, len(stream)))),
    )


@PROPERTY
@given(st.data())
def test_random_streams_in_random_pieces_give_the_standards_events(data: st.DataObject) -> None:
    stream = data.draw(streams(), label="stream")
    cuts = data.draw(cuts_for(stream), label="cuts")
    expected = [event.data for event in standard_parse(stream).events]
    assert split(pieces_of(stream, cuts)) == expected


CHAT_KINDS = st.sampled_from(["plain"] * 4 + ["comment", "retry", "named", "lines", "empty"])


@st.composite
def chat_streams(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    """What OpenAI-compatible servers send: one JSON object per event, now and then a comment
    (OpenRouter's `: OPENROUTER PROCESSING`), a `retry:`, a named event, an event whose JSON is
    spread over several `data:` lines, or empty data; CRLF or LF throughout."""
    end = draw(st.sampled_from([b"\n", b"\r\n"]))
    stream, datas = b"", []
    for index in range(draw(st.integers(1, 8))):
        chunk = json.dumps({"choices": [{"delta": {"content": draw(st.text(max_size=8))}}]})
        kind = draw(CHAT_KINDS)
        if kind == "comment":
            stream += b": OPENROUTER PROCESSING" + end + end
        elif kind == "retry":
            stream += b"retry: 3000" + end
        elif kind == "named":
            stream += b"event: message" + end + b"id: " + str(index).encode() + end
        if kind == "lines":
            spread = json.dumps(json.loads(chunk), indent=1)
            stream += b"".join(b"data: " + line.encode() + end for line in spread.split("\n"))
            datas.append(spread)
        elif kind == "empty":
            stream += b"data:" + end
            datas.append("")
        else:
            stream += b"data: " + chunk.encode() + end
            datas.append(chunk)
        stream += end
    return stream + b"data: [DONE]" + end + end, [*datas, "[DONE]"]


@settings(PROPERTY, max_examples=100)  # longer streams, each also cut at every byte
@given(chat_streams(), st.data())
def test_chat_streams_split_anywhere_give_every_event(
    stream_and_datas: tuple[bytes, list[str]], data: st.DataObject
) -> None:
    stream, datas = stream_and_datas
    expected = [event.data for event in standard_parse(stream).events]
    assert expected == datas
    assert split(pieces_of(stream, data.draw(cuts_for(stream), label="cuts"))) == expected


def test_an_empty_piece_between_a_cr_and_its_lf_keeps_them_one_line_end() -> None:
    assert split([b"data: a\r", b"", b"\ndata: b\r\n\r\n"]) == ["a\nb"]


def test_a_byte_order_mark_is_dropped_only_at_the_start() -> None:
    assert split([b"\xef", b"\xbb\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\n"]) == ["a"]


# -- the `error:` field (llama.cpp) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (
            b'error: {"code":400,"message":"the request exceeds the available context size"}',
            {"code": 400, "message": "the request exceeds the available context size"},
        ),
        (b"error:not json", {"message": "not json"}),
        (b"error: ", {"message": ""}),
    ],
)
def test_an_error_field_becomes_an_error_event_before_what_follows(
    line: bytes, error: object
) -> None:
    events = EventSplitter().feed(b"data: {}\n\n" + line + b"\n\ndata: [DONE]\n\n")
    assert events[0] == b"{}" and events[2] == b"[DONE]"
    assert json.loads(events[1]) == {"error": error}


# -- limits ------------------------------------------------------------------------------------


@st.composite
def ascii_streams(draw: st.DrawFn) -> bytes:
    """Streams of short and long data lines, comments and blank lines (ASCII, so a line's
    length is the same counted in characters or bytes)."""
    parts = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["data", "data", "blank", "comment", "bare"]))
        body = b"x" * draw(st.integers(0, 24))
        line = {"data": b"data: " + body, "blank": b"", "comment": b":" + body, "bare": b"data"}
        parts.append(line[kind] + draw(LINE_ENDS))
    stream = b"".join(parts)
    if draw(st.booleans()):
        stream += b"data: " + b"y" * draw(st.integers(0, 30))
    return stream


@PROPERTY
@given(
    ascii_streams(),
    st.builds(Limits, st.integers(4, 60), st.integers(0, 80), st.integers(1, 5)),
    st.data(),
)
def test_limits_stop_the_stream_where_the_standards_parse_would_break_them(
    stream: bytes, limits: Limits, data: st.DataObject
) -> None:
    """The same verdict, and the same events before it, however the stream was cut."""
    splitter = EventSplitter(
        max_line=limits.line, max_event_data=limits.data, max_event_lines=limits.lines
    )
    got: list[bytes] = []
    refused = False
    for piece in pieces_of(stream, data.draw(cuts_for(stream), label="cuts")):
        try:
            got += splitter.feed(piece)
        except EventStreamError as error:
            got += error.events
            refused = True
            break
        held_bytes, held_lines = splitter.held
        assert held_bytes <= limits.line + limits.data and held_lines <= limits.lines
    expected = standard_parse(stream, limits)
    assert (got, refused) == ([e.data.encode() for e in expected.events], expected.refused)
