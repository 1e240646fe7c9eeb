"""Response heads read by firsttoken's HTTP client, held to h11 (the parser httpx reads with).

Both read the same random responses (a status line, header fields, maybe an informational head
first, then a body framed by what the head says), cut into the same random packets, and must
give the same verdict (read whole, or refused), the same status, reason, version and header
fields (names lower-cased, Content-Length and Transfer-Encoding as h11 normalises them), and the
same body data. "firsttoken" below is what the client does: HeadReader, then the framing the
head implies, through http/body.py's BodyReceiver.

Deliberate differences, kept out of the equality and asserted on their own: a head over
MAX_HEAD_BYTES is refused even when it arrives whole (h11 refuses one only while incomplete),
and so is one with more than MAX_FIELDS fields (h11 has no count limit).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import h11
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.engine.http.body import BodyReceiver, Collector, content_decoder, framing_of
from tui.engine.http.errors import ConnectionFailed
from tui.engine.http.response_head import (
    MAX_FIELDS,
    MAX_HEAD_BYTES,
    HeadError,
    HeadReader,
    ResponseHead,
)

PROPERTY = settings(
    derandomize=True,
    deadline=None,
    max_examples=300,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

Head = tuple[bytes, int, bytes, tuple[tuple[bytes, bytes], ...]]


@dataclass(frozen=True)
class Read:
    head: Head | None  # (version, status, reason, fields) of the final head, once read
    data: bytes  # the body's data
    whole: bool  # the response was read to its end; False: refused, or cut off


def h11_reads(packets: list[bytes]) -> Read:
    """h11's client connection, its POST sent, reading `packets` (the response) then EOF."""
    connection = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
    connection.send(
        h11.Request(method="POST", target="/v1", headers=[("Host", "t"), ("Content-Length", "0")])
    )
    connection.send(h11.EndOfMessage())
    head: Head | None = None
    data = bytearray()
    try:
        for packet in [*packets, b""]:  # b"" tells h11 the connection ended
            connection.receive_data(packet)
            while True:
                event = connection.next_event()
                if isinstance(event, h11.Response):
                    fields = tuple((bytes(n), bytes(v)) for n, v in event.headers)
                    head = (event.http_version, event.status_code, event.reason, fields)
                elif isinstance(event, h11.Data):
                    data += event.data
                elif isinstance(event, h11.EndOfMessage):
                    return Read(head, bytes(data), True)
                elif event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed):
                    break
                else:
                    assert isinstance(event, h11.InformationalResponse), event
    except h11.RemoteProtocolError:
        pass
    return Read(head, bytes(data), False)


def _shown(head: ResponseHead) -> Head:
    fields = tuple((name.encode(), value.encode("latin-1")) for name, value in head.headers)
    return (head.http_version.encode(), head.status, head.reason.encode("latin-1"), fields)


def firsttoken_reads(packets: list[bytes]) -> Read:
    """The client's way: HeadReader to the final head, then the body the head frames."""
    reader = HeadReader()
    head: ResponseHead | None = None
    receiver: BodyReceiver | None = None
    collector = Collector()
    try:
        for packet in packets:
            data = packet
            if head is None:
                done = reader.feed(data)
                if done is None:
                    continue
                head, data = done
                framing = framing_of(head, "POST")
                receiver = BodyReceiver(framing, content_decoder(head, "t"), collector, "t")
            assert receiver is not None
            if receiver.data(data, 0.0) is not None:
                return Read(_shown(head), bytes(collector.data), True)
        if receiver is None:
            return Read(None, b"", False)
        receiver.end(0.0)  # the connection ended: whole only for a body that runs to the close
        assert head is not None
        return Read(_shown(head), bytes(collector.data), True)
    except (HeadError, ConnectionFailed):
        return Read(_shown(head) if head is not None else None, bytes(collector.data), False)


def both_read(response: bytes, cuts: list[int]) -> tuple[Read, Read]:
    edges = sorted({0, *(c for c in cuts if 0 < c < len(response)), len(response)})
    packets = [response[a:b] for a, b in pairwise(edges)]
    return firsttoken_reads(packets), h11_reads(packets)


# -- responses ---------------------------------------------------------------------------------

VERSIONS = [b"HTTP/1.1"] * 6 + [b"HTTP/1.0", b"HTTP/2.0", b"http/1.1", b"HTTP/11", b"HTTP/1.x"]
STATUSES = [b"200"] * 6 + [b"201", b"204", b"304", b"404", b"500", b"999", b"099", b"20", b"2000"]
REASONS = [b" OK"] * 4 + [
    b"",
    b" ",
    b" Not Found",
    b" a\tb",
    b" \xe9t\xe9 obs-text",
    b"OK",  # no space before the reason
    b"  two spaces",
    b" nul\x00",
    b" vertical\x0btab",
    b" form\x0cfeed",
]
GOOD_FIELDS = [
    b"Content-Type: text/event-stream",
    b"X-A: 1",
    b"x-lower:2",
    b"X-Empty:",
    b"X-Padded:   padded value \t",
    b"X-Tab:\tv",
    b"X-Obs: \xe9t\xe9",
    b"X-Colon: a:b",
    b"Cache-Control: no-cache, no-transform",
    b"Connection: close",
    b"Connection: keep-alive",
    b" folded continuation",
    b"\tfolded with a tab",
]
BROKEN_FIELDS = [
    b"No Colon",
    b"Bad Name: x",
    b": no name",
    b"X-Nul: a\x00b",
    b"X-CR: a\rb",
    b"X-VT: a\x0bb",
    b"X(paren): x",
    b"Transfer-Encoding: gzip",
    b"Transfer-Encoding: gzip, chunked",
    b"Content-Length: -1",
    b"Content-Length: 0x5",
    b"Content-Length:",
    b"Content-Length: 1, 2",
    b"Content-Length: " + b"9" * 21,
]
LINE_ENDS = [b"\r\n"] * 6 + [b"\n", b"\r\r\n"]
INFORMATIONAL = [
    b"HTTP/1.1 100 Continue\r\n\r\n",
    b"HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n",
    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
    b"HTTP/1.1 099 Below\r\n\r\n",
]


@st.composite
def chunked_body(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` as chunks (now and then cut short: the response ends mid-body)."""
    pieces = []
    rest = data
    while rest:
        size = draw(st.integers(1, max(1, len(rest))))
        pieces.append(rest[:size])
        rest = rest[size:]
    body = b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in pieces) + b"0\r\n\r\n"
    if draw(st.integers(0, 5)) == 0:
        body = body[: draw(st.integers(0, len(body)))]
    return body


@st.composite
def responses(draw: st.DrawFn) -> bytes:
    status = draw(st.sampled_from(STATUSES))
    line = draw(st.sampled_from(VERSIONS)) + b" " + status + draw(st.sampled_from(REASONS))
    field = st.one_of(
        st.sampled_from(GOOD_FIELDS), st.sampled_from(GOOD_FIELDS), st.sampled_from(BROKEN_FIELDS)
    )
    fields = draw(st.lists(field, max_size=5))
    data = draw(st.binary(min_size=draw(st.sampled_from([0, 1, 1, 1])), max_size=60))
    framing = draw(st.sampled_from(["length", "length", "chunked", "chunked", "close", "both"]))
    if framing in ("length", "both"):
        declared = len(data) + draw(st.sampled_from([0] * 6 + [-3, -1, 2]))
        length = f"Content-Length: {max(0, declared)}".encode()
        fields.insert(draw(st.integers(0, len(fields))), length)
        if draw(st.integers(0, 4)) == 0:  # the same length twice, or a conflicting one
            fields.append(draw(st.sampled_from([length, b"Content-Length: 99999"])))
    if framing in ("chunked", "both"):
        encoding = draw(st.sampled_from([b"chunked"] * 4 + [b"Chunked", b"CHUNKED"]))
        fields.insert(draw(st.integers(0, len(fields))), b"Transfer-Encoding: " + encoding)
        if draw(st.integers(0, 6)) == 0:
            fields.append(b"Transfer-Encoding: chunked")
        body = draw(chunked_body(data))
    else:
        body = data
    lines = [line, *fields]
    head = b"".join(text + draw(st.sampled_from(LINE_ENDS)) for text in lines)
    head += draw(st.sampled_from([b"\r\n"] * 4 + [b"\n"]))
    before = draw(st.sampled_from([b""] * 4 + INFORMATIONAL))
    prefix = draw(st.sampled_from([b""] * 12 + [b" ", b"\r\n", b"\n", b"\x00"]))
    response = prefix + before + head + body
    if draw(st.integers(0, 6)) == 0:  # cut off anywhere, the head included
        response = response[: draw(st.integers(0, len(response)))]
    return response


def cuts_for(response: bytes) -> st.SearchStrategy[list[int]]:
    return st.one_of(
        st.lists(st.integers(1, max(1, len(response))), max_size=10),
        st.just(list(range(1, len(response)))),
    )


@PROPERTY
@given(st.data())
def test_random_responses_in_random_packets_read_as_h11_reads_them(data: st.DataObject) -> None:
    response = data.draw(responses(), label="response")
    cuts = data.draw(cuts_for(response), label="cuts")
    firsttoken, reference = both_read(response, cuts)
    assert firsttoken == reference


@st.composite
def well_formed(draw: st.DrawFn) -> tuple[bytes, int, bytes]:
    """(a response servers send, its status, its body data)."""
    status = draw(st.sampled_from([200, 200, 400, 401, 404, 429, 500, 503]))
    data = draw(st.binary(max_size=80))
    fields = [b"Content-Type: application/json", b"Date: Tue, 01 Dec 2026 10:00:00 GMT"]
    if draw(st.booleans()):
        fields.append(f"Content-Length: {len(data)}".encode())
        body = data
    else:
        fields.append(b"Transfer-Encoding: chunked")
        body = draw(chunked_body(data).filter(lambda b: b.endswith(b"0\r\n\r\n")))
    head = f"HTTP/1.1 {status} Reason\r\n".encode() + b"".join(f + b"\r\n" for f in fields)
    return head + b"\r\n" + body, status, data


@PROPERTY
@given(well_formed(), st.data())
def test_well_formed_responses_split_anywhere_read_whole(
    case: tuple[bytes, int, bytes], data: st.DataObject
) -> None:
    response, status, body = case
    firsttoken, reference = both_read(response, data.draw(cuts_for(response), label="cuts"))
    assert firsttoken == reference
    assert firsttoken.whole and firsttoken.data == body
    assert firsttoken.head is not None and firsttoken.head[1] == status


@PROPERTY
@given(st.binary(min_size=1, max_size=40), st.booleans(), st.data())
def test_chunked_coding_wins_over_a_content_length(
    data: bytes, length_first: bool, cuts: st.DataObject
) -> None:
    lines = [f"Content-Length: {len(data)}".encode(), b"Transfer-Encoding: chunked"]
    if not length_first:
        lines.reverse()
    body = f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n"
    response = b"HTTP/1.1 200 OK\r\n" + b"".join(line + b"\r\n" for line in lines) + b"\r\n" + body
    firsttoken, reference = both_read(response, cuts.draw(cuts_for(response), label="cuts"))
    assert firsttoken == reference and firsttoken.data == data and firsttoken.whole


@pytest.mark.parametrize("first", INFORMATIONAL)
def test_an_informational_head_before_the_answer_is_judged_as_h11_judges_it(first: bytes) -> None:
    response = first + b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    firsttoken, reference = both_read(response, [])
    assert firsttoken == reference
    assert firsttoken.whole == (first[9:12] in (b"100", b"103"))  # 101 and 099 are refused


# -- the limits, where firsttoken refuses what h11 would take ----------------------------------


def test_a_head_over_the_size_limit_is_refused_even_whole() -> None:
    padding = b"X-Pad: " + b"p" * 1000 + b"\r\n"
    head = b"HTTP/1.1 200 OK\r\n" + padding * (MAX_HEAD_BYTES // len(padding) + 1) + b"\r\n"
    response = head + b"0\r\n\r\n"
    firsttoken, _ = both_read(response, [])
    assert firsttoken == Read(None, b"", False)
    with pytest.raises(HeadError, match="longer than 64 KiB"):
        HeadReader().feed(head)
    reference = h11_reads([head.replace(b"\r\n\r\n", b"\r\nContent-Length: 0\r\n\r\n")])
    assert reference.whole  # h11 takes a head of any size that arrives in one piece


def test_an_unfinished_head_is_refused_past_the_limit_holding_at_most_it() -> None:
    reader = HeadReader()
    with pytest.raises(HeadError, match="longer than 64 KiB"):
        reader.feed(b"HTTP/1.1 200 OK\r\n")
        while True:
            reader.feed(b"X-Field: " + b"v" * 1000 + b"\r\n")
            assert reader.held <= MAX_HEAD_BYTES


def test_too_many_header_fields_are_refused() -> None:
    fields = b"".join(f"X-{index}: v\r\n".encode() for index in range(MAX_FIELDS + 1))
    response = b"HTTP/1.1 200 OK\r\n" + fields + b"Content-Length: 0\r\n\r\n"
    with pytest.raises(HeadError, match=f"more than {MAX_FIELDS} header fields"):
        HeadReader().feed(response)
    assert h11_reads([response]).whole  # h11 has no count limit
    at_the_limit = b"".join(f"X-{index}: v\r\n".encode() for index in range(MAX_FIELDS - 1))
    ok = b"HTTP/1.1 200 OK\r\n" + at_the_limit + b"Content-Length: 0\r\n\r\n"
    assert both_read(ok, [])[0].whole


def test_a_head_arriving_one_byte_at_a_time_is_searched_once() -> None:
    # The end of the head is looked for only in new bytes: a long head byte by byte stays
    # linear (a quadratic search would take minutes here).
    head = b"HTTP/1.1 200 OK\r\n" + b"X-Long: " + b"v" * 60_000 + b"\r\n\r\n"
    reader = HeadReader()
    done = None
    for index in range(len(head)):
        done = reader.feed(head[index : index + 1])
    assert done is not None and done[0].headers.get("x-long") == "v" * 60_000
