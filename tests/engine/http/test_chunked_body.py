"""The chunked transfer coding decoder a streamed reply's body is read with (http/chunked.py)."""

from __future__ import annotations

import pytest

from tui.engine.http.chunked import ChunkedBodyError, ChunkedDecoder

DATA = [b"data: one\n\n", b"x" * 300, b"\r\n inside data \r\n", b"z"]
LAST = b"0\r\nTrailer: yes\r\n\r\n"
SIZE_LINES = [
    f"{len(DATA[0]):x}\r\n",
    f"{len(DATA[1]):X};name=value\r\n",  # an extension, upper-case hex
    f"{len(DATA[2]):04x}\r\n",  # leading zeros
    f"{len(DATA[3]):x} \r\n",  # whitespace after the size
]
BODY = (
    b"".join(line.encode() + data + b"\r\n" for line, data in zip(SIZE_LINES, DATA, strict=True))
    + LAST
)


def decode_in_pieces(body: bytes, cuts: list[int]) -> tuple[bytes, bytes | None]:
    decoder = ChunkedDecoder()
    data, end = b"", None
    for start, stop in zip([0, *cuts], [*cuts, len(body)], strict=True):
        pieces, end = decoder.feed(body[start:stop])
        data += b"".join(pieces)
        if end is not None:
            end += body[stop:]
            break
    return data, end


def test_one_piece_gives_the_data_and_hands_back_the_last_chunk() -> None:
    assert decode_in_pieces(BODY, []) == (b"".join(DATA), LAST)


@pytest.mark.parametrize("cut", range(1, len(BODY)))
def test_a_body_cut_in_two_anywhere_decodes_the_same(cut: int) -> None:
    data, end = decode_in_pieces(BODY, [cut])
    assert data == b"".join(DATA)
    assert end is not None and end.endswith(LAST) and LAST.startswith(end[: len(LAST)])


def test_one_byte_at_a_time_decodes_the_same() -> None:
    data, end = decode_in_pieces(BODY, list(range(1, len(BODY))))
    assert (data, end) == (b"".join(DATA), LAST)


def test_data_arrives_as_its_bytes_arrive() -> None:
    decoder = ChunkedDecoder()
    assert decoder.feed(b"a\r\n01234") == ([b"01234"], None)
    assert decoder.feed(b"56789\r") == ([b"56789"], None)
    assert decoder.feed(b"\n3\r\nabc\r\n") == ([b"abc"], None)


@pytest.mark.parametrize(
    "body",
    [
        b"zz\r\nab\r\n",  # not hex
        b"-1\r\nab\r\n",
        b"2\r\nabc\r\n",  # data longer than its size
        b"2\r\nab\rX",  # a CR not followed by LF
        b"2\r\nabX",
        b"1" * 5000,  # a size line that never ends
    ],
)
def test_a_broken_coding_is_an_error(body: bytes) -> None:
    with pytest.raises(ChunkedBodyError):
        ChunkedDecoder().feed(body)


def test_a_break_keeps_the_data_decoded_before_it() -> None:
    with pytest.raises(ChunkedBodyError) as raised:
        ChunkedDecoder().feed(b"2\r\nab\r\n3\r\ncde\r\nzz\r\n")
    assert raised.value.pieces == [b"ab", b"cde"]
