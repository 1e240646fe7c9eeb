"""firsttoken's chunked body reading held to h11, the parser httpx reads with.

Both read the same random bodies (well formed and broken), cut into the same random packets, and
must give the same data and the same verdict: the message read whole, or refused (a protocol
error, or a body cut off). The data handed over before a refusal must match too.

What is compared is what the client does: ChunkedDecoder until the last chunk, then the trailer
and the end of the message (http/body.py's ChunkedBody, fed the body as the connection hands it
over); the reference is h11 reading the whole response.

Deliberate differences, kept out of the equality and asserted on their own:
- a chunk size over MAX_CHUNK_SIZE (1 GiB) is refused at its size line. h11 takes any size of up
  to 20 hex digits and reads on, so a finite body ends short (h11 refuses at its end) after h11
  handed over bytes that firsttoken never read as data.
- a size line longer than MAX_SIZE_LINE (4 KiB) is refused. h11 takes one of any length when its
  CRLF comes in the same read and refuses one still open past 16 KiB, so its verdict depends on
  how the packets fell. Generated extensions stay far below 4 KiB.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import h11
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.engine.http.body import ChunkedBody
from tui.engine.http.chunked import MAX_CHUNK_SIZE, MAX_SIZE_LINE, ChunkedBodyError

# Deterministic on CI (the same examples every run), no deadline (a loaded machine is slow).
PROPERTY = settings(
    derandomize=True,
    deadline=None,
    max_examples=120,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


@dataclass(frozen=True)
class Read:
    data: bytes  # every data byte handed over, in order
    whole: bool  # the message ended properly; False: refused, or cut off before its end
    refusal: str = ""  # firsttoken's own refusal, when it refused the body itself


def h11_reads(packets: list[bytes]) -> Read:
    """h11's client connection, its request sent, reading `packets` (the response) then EOF."""
    connection = h11.Connection(h11.CLIENT)
    connection.send(
        h11.Request(
            method="POST",
            target="/v1/chat/completions",
            headers=[("Host", "test"), ("Content-Length", "0")],
        )
    )
    connection.send(h11.EndOfMessage())
    data = bytearray()
    try:
        for packet in [*packets, b""]:  # b"" tells h11 the connection ended
            connection.receive_data(packet)
            while True:
                event = connection.next_event()
                if isinstance(event, h11.Data):
                    data += event.data
                elif isinstance(event, h11.EndOfMessage):
                    return Read(bytes(data), True)
                elif event is h11.NEED_DATA:
                    break
                else:
                    assert isinstance(event, h11.Response), event
    except h11.RemoteProtocolError:
        pass
    return Read(bytes(data), False)


def firsttoken_reads(body_packets: list[bytes]) -> Read:
    """The client's way: http/body.py's ChunkedBody (ChunkedDecoder to the last chunk, then the
    trailer), fed the body as the connection delivers it."""
    body = ChunkedBody("test")
    data = bytearray()
    for packet in body_packets:
        try:
            pieces, rest = body.feed(packet)
        except ChunkedBodyError as error:
            return Read(bytes(data) + b"".join(error.pieces), False, str(error))
        data += b"".join(pieces)
        if rest is not None:
            return Read(bytes(data), True)
    return Read(bytes(data), False)  # the body ended before its end of message


def both_read(body: bytes, cuts: list[int]) -> tuple[Read, Read]:
    """(firsttoken, h11) reading HEAD + body cut at `cuts` (offsets into the whole response)."""
    response = HEAD + body
    edges = sorted({0, *(c for c in cuts if 0 < c < len(response)), len(response)})
    packets = [response[a:b] for a, b in pairwise(edges)]
    # The body reaches the decoder as the connection delivers it: the first piece is what was
    # left of the packet the head ended in.
    body_edges = sorted({0, *(c - len(HEAD) for c in edges if len(HEAD) < c < len(response))})
    body_edges.append(len(body))
    body_packets = [body[a:b] for a, b in pairwise(body_edges) if b > a]
    return firsttoken_reads(body_packets), h11_reads(packets)


# -- bodies ------------------------------------------------------------------------------------

LINE_ENDS = st.sampled_from([b"\r\n"] * 6 + [b"\n", b"\r", b"", b"\r\r\n", b" \r\n"])
DATA_ENDS = st.sampled_from([b"\r\n"] * 6 + [b"\n", b"\r", b"", b"\rx", b"\r\n\r\n"])
EXTENSION_BYTES = st.binary(max_size=12).map(lambda b: b.replace(b"\n", b""))
TOKEN = st.text(alphabet="abcXYZ-_!#09", min_size=1, max_size=6).map(str.encode)


@st.composite
def extensions(draw: st.DrawFn) -> bytes:
    """`;name`, `;name=value`, `;name="quoted ; string"`, repeated; now and then raw bytes."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(TOKEN)
        kind = draw(st.sampled_from(["bare", "token", "quoted", "raw"]))
        if kind == "bare":
            parts.append(b";" + name)
        elif kind == "token":
            parts.append(b";" + name + b"=" + draw(TOKEN))
        elif kind == "quoted":
            inner = draw(st.sampled_from([b"a b", b"semi;colon", b'esc\\"aped', b"", b"tab\t"]))
            parts.append(b";" + name + b'="' + inner + b'"')
        else:
            parts.append(b";" + draw(EXTENSION_BYTES))
    space = draw(st.sampled_from([b"", b"", b" ", b"\t", b" \t"]))
    return b"".join(parts) + space


@st.composite
def size_lines(draw: st.DrawFn, size: int) -> bytes:
    """The size line for `size`: mostly as servers write it (any case, leading zeros, an
    extension, trailing whitespace), sometimes broken (whitespace first, a sign, 0x, junk,
    too many digits, nothing at all)."""
    digits = draw(st.sampled_from([f"{size:x}", f"{size:X}"])).encode()
    digits = b"0" * draw(st.sampled_from([0, 0, 0, 1, 3, 20 - len(digits), 21 - len(digits)])) + (
        digits
    )
    kind = draw(st.sampled_from(["plain"] * 4 + ["extension"] * 2 + ["space", "broken"]))
    if kind == "extension":
        return digits + draw(extensions())
    if kind == "space":
        return digits + draw(st.sampled_from([b" ", b"\t", b"  \t"]))
    if kind == "broken":
        return draw(
            st.sampled_from(
                [
                    b" " + digits,
                    b"\t" + digits,
                    digits + b" ;x=1",
                    b"-" + digits,
                    b"+" + digits,
                    b"0x" + digits,
                    b"",
                    b";x",
                    digits + b"g",
                    digits[:1] + b" " + digits[1:],
                    b"1" * 21,
                    b"f" * 17,
                ]
            )
        )
    return digits


@st.composite
def chunks(draw: st.DrawFn) -> bytes:
    data = draw(st.binary(min_size=1, max_size=40))
    # Now and then the size says more or less than the data holds.
    declared = max(0, len(data) + draw(st.sampled_from([0] * 8 + [-2, -1, 1, 3])))
    return draw(size_lines(declared)) + draw(LINE_ENDS) + data + draw(DATA_ENDS)


@st.composite
def trailers(draw: st.DrawFn) -> bytes:
    """The last chunk, its trailer fields (`Name: value`, now and then a broken one) and the
    blank line that ends the message."""
    fields = draw(
        st.lists(
            st.sampled_from(
                [b"Checksum: abc", b"X-Usage: 12", b"Empty:", b"no colon", b" folded", b"A:\tb"]
            ),
            max_size=3,
        )
    )
    line_end = draw(st.sampled_from([b"\r\n"] * 4 + [b"\n"]))
    return (
        draw(size_lines(0))
        + draw(LINE_ENDS)
        + b"".join(field + line_end for field in fields)
        + draw(st.sampled_from([b"\r\n"] * 4 + [b"\n", b""]))
    )


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    body = b"".join(draw(st.lists(chunks(), max_size=6))) + draw(trailers())
    if draw(st.booleans()):
        body += draw(st.sampled_from([b"HTTP/1.1 200 OK\r\n", b"junk", b"\r\n"]))
    if draw(st.integers(0, 3)) == 0:  # cut off anywhere
        body = body[: draw(st.integers(0, len(body)))]
    return body


def cuts_for(body: bytes) -> st.SearchStrategy[list[int]]:
    """Where the response is cut into packets: anywhere (inside size lines, CRLFs, extensions,
    data), a few times or at every byte."""
    length = len(HEAD) + len(body)
    return st.one_of(
        st.lists(st.integers(1, length), max_size=12),
        st.just(list(range(1, length))),
    )


# -- the same bodies, the same reading ---------------------------------------------------------


def assert_same_reading(firsttoken: Read, reference: Read) -> None:
    if "limit" in firsttoken.refusal:  # a size over MAX_CHUNK_SIZE: see the module's docstring
        size = int(firsttoken.refusal.split(" of ")[1].split()[0], 16)
        assert size > MAX_CHUNK_SIZE
        assert not reference.whole and reference.data.startswith(firsttoken.data)
        return
    assert (firsttoken.data, firsttoken.whole) == (reference.data, reference.whole)


@PROPERTY
@given(st.data())
def test_random_bodies_in_random_packets_read_as_h11_reads_them(data: st.DataObject) -> None:
    body = data.draw(bodies(), label="body")
    cuts = data.draw(cuts_for(body), label="cuts")
    assert_same_reading(*both_read(body, cuts))


@st.composite
def well_formed(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """(a body servers could send, its data): no breakage, extensions and trailers allowed."""
    datas = draw(st.lists(st.binary(min_size=1, max_size=60), max_size=8))
    body = b""
    for piece in datas:
        size = f"{len(piece):x}".encode()
        if draw(st.booleans()):
            size = b"0" * draw(st.integers(1, 4)) + size
        if draw(st.booleans()):
            size += draw(extensions())
        body += size + b"\r\n" + piece + b"\r\n"
    zero = b"0" + (draw(extensions()) if draw(st.booleans()) else b"")
    fields = draw(st.lists(st.sampled_from([b"Checksum: abc", b"X-Usage: 12"]), max_size=2))
    body += zero + b"\r\n" + b"".join(f + b"\r\n" for f in fields) + b"\r\n"
    return body, b"".join(datas)


@PROPERTY
@given(well_formed(), st.data())
def test_well_formed_bodies_split_anywhere_give_their_data_whole(
    body_and_data: tuple[bytes, bytes], data: st.DataObject
) -> None:
    body, expected = body_and_data
    cuts = data.draw(cuts_for(body), label="cuts")
    firsttoken, reference = both_read(body, cuts)
    assert reference == Read(expected, True)
    assert firsttoken == reference


SIZE_TOKENS = [
    b"5",
    b"05",
    b"00000000000000000005",  # 20 digits: the most h11 reads
    b"000000000000000000005",  # 21: refused
    b"5 ",
    b"5\t",
    b" 5",
    b"5 ;a",
    b"5;a=b",
    b'5;a="x;y"',
    b"5;a\rb",  # a lone CR inside an extension: h11 takes it (it only ends lines at CRLF)
    b"5\r",
    b"5\n",
    b"-5",
    b"+5",
    b"0x5",
    b"",
    b"5g",
    b"g",
    b"5 5",
    b"\x005",
]


@PROPERTY
@given(st.sampled_from(SIZE_TOKENS), st.sampled_from([b"\r\n", b"\n", b"\r"]), st.data())
def test_every_kind_of_size_line_is_judged_as_h11_judges_it(
    token: bytes, line_end: bytes, data: st.DataObject
) -> None:
    body = b"3\r\nabc\r\n" + token + line_end + b"hello\r\n0\r\n\r\n"
    assert_same_reading(*both_read(body, data.draw(cuts_for(body), label="cuts")))


# -- where firsttoken refuses what h11 would read on -------------------------------------------


@PROPERTY
@given(st.integers(MAX_CHUNK_SIZE + 1, 16**20 - 1), st.booleans(), st.data())
def test_a_chunk_size_over_the_limit_is_refused_at_its_size_line(
    size: int, upper: bool, data: st.DataObject
) -> None:
    digits = (f"{size:X}" if upper else f"{size:x}").encode()
    body = b"3\r\nabc\r\n" + digits + b"\r\n" + b"data: x\n\n" * 4
    firsttoken, reference = both_read(body, data.draw(cuts_for(body), label="cuts"))
    refusal = f"a chunk size of {size:#x} bytes, over the 1 GiB limit"
    assert firsttoken == Read(b"abc", False, refusal)
    assert reference == Read(b"abc" + b"data: x\n\n" * 4, False)  # h11 reads on, then ends short


def test_the_largest_allowed_chunk_is_read_until_the_body_ends() -> None:
    body = f"{MAX_CHUNK_SIZE:x}\r\n".encode() + b"data: x\n\n" * 4
    firsttoken, reference = both_read(body, [len(HEAD) + 3])
    assert firsttoken == reference == Read(b"data: x\n\n" * 4, False)


def test_a_size_line_over_the_limit_is_refused_even_with_its_crlf_in_the_same_read() -> None:
    long_extension = b"5;" + b"x" * MAX_SIZE_LINE + b"\r\nhello\r\n0\r\n\r\n"
    firsttoken, reference = both_read(long_extension, [])
    assert firsttoken == Read(b"", False, f"a chunk size line longer than {MAX_SIZE_LINE} bytes")
    assert reference == Read(b"hello", True)  # h11 has no limit on a line that arrives whole
    at_the_limit = b"5;" + b"x" * (MAX_SIZE_LINE - 2) + b"\r\nhello\r\n0\r\n\r\n"
    firsttoken, reference = both_read(at_the_limit, [])
    assert firsttoken == reference == Read(b"hello", True)
