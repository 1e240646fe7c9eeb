"""Splitting SSE events out of a body that arrives in arbitrary pieces (no HTTP involved)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tui.engine.chat.sse import EventSplitter


def split(*pieces: bytes) -> list[bytes]:
    splitter = EventSplitter()
    return [event for piece in pieces for event in splitter.feed(piece)]


def test_one_event_per_blank_line() -> None:
    assert split(b'data: {"a":1}\n\ndata: {"b":2}\n\n') == [b'{"a":1}', b'{"b":2}']


def test_an_event_is_only_complete_at_its_blank_line() -> None:
    splitter = EventSplitter()
    assert splitter.feed(b'data: {"a"') == []
    assert splitter.feed(b":1}\n") == []
    assert splitter.feed(b"\n") == [b'{"a":1}']


def test_crlf_and_cr_line_ends_including_a_crlf_split_across_reads() -> None:
    assert split(b"data: x\r\n\r\ndata: y\r\r") == [b"x", b"y"]
    assert split(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n") == [b"a\nb"]


def test_comments_other_fields_and_multiline_data() -> None:
    body = b": ping\n\nevent: message\nid: 7\nretry: 10\ndata: one\ndata:two\ndata\n\n"
    assert split(body) == [b"one\ntwo\n"]


def test_an_unfinished_event_at_the_end_is_dropped() -> None:
    assert split(b"data: [DONE]\n\ndata: tail") == [b"[DONE]"]


def test_lines_not_starting_with_data_colon_are_not_data() -> None:
    assert split(b"database: x\ndata: y\n\n") == [b"y"]


events_text = st.lists(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
        max_size=30,
    ).map(str.encode),
    min_size=1,
    max_size=8,
)


@given(events_text, st.sampled_from([b"\n", b"\r\n", b"\r"]), st.data())
def test_any_split_of_the_body_gives_the_same_events(
    datas: list[bytes], end: bytes, data: st.DataObject
) -> None:
    body = b"".join(b"data: " + d + end + end for d in datas)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=6)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert split(*pieces) == datas
