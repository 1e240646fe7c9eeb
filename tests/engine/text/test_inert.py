"""The terminal sanitiser: every control becomes a visible stand-in, nothing of a sequence runs."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.engine.text.inert import InertStream, has_control, inert, inert_line, json_text

ATTACKS = [
    ("osc 52 \x1b]52;c;aGVsbG8=\x07!", "osc 52 ␛]52;c;aGVsbG8=␇!"),
    ("title \x1b]0;pwned\x07 \x1b]2;x\x1b\\", "title ␛]0;pwned␇ ␛]2;x␛\\"),
    ("clear\x1b[2J\x1b[H", "clear␛[2J␛[H"),
    ("cursor \x1b[5A\x1b[10;3H\x1b7\x1b8", "cursor ␛[5A␛[10;3H␛7␛8"),
    ("dcs \x1bPq#0;2;0;0;0\x1b\\", "dcs ␛Pq#0;2;0;0;0␛\\"),
    ("c1 csi \x9b2J c1 osc \x9d0;t\x9c", "c1 csi \\x9b2J c1 osc \\x9d0;t\\x9c"),
    ("nul\x00 del\x7f bs\x08", "nul␀ del␡ bs␈"),
    ("keeps\ttab\nand newline 你好 🙂", "keeps\ttab\nand newline 你好 🙂"),
    ("crlf\r\nline", "crlf\nline"),
    ("progress 10%\rprogress 99%", "progress 10%\nprogress 99%"),
]

ESCAPE_BYTES = frozenset(range(0x00, 0x20)) - {0x09, 0x0A}
C1 = frozenset(range(0x7F, 0xA0))


def _safe(text: str) -> bool:
    """No C0 control but tab and newline, no DEL or C1, no CR at all."""
    return not any(ord(c) in ESCAPE_BYTES or ord(c) in C1 for c in text)


@pytest.mark.parametrize(("raw", "shown"), ATTACKS)
def test_inert(raw: str, shown: str) -> None:
    assert inert(raw) == shown


@pytest.mark.parametrize(("raw", "shown"), ATTACKS)
def test_a_stream_split_anywhere_shows_the_same(raw: str, shown: str) -> None:
    for cut in range(len(raw) + 1):
        stream = InertStream()
        out = stream.feed(raw[:cut]) + stream.feed(raw[cut:]) + stream.flush()
        assert out == shown, (cut, out)


def test_a_crlf_split_across_deltas_is_one_line_end() -> None:
    stream = InertStream()
    assert stream.feed("one\r") == "one"
    assert stream.feed("\ntwo\r") == "\ntwo"
    assert stream.feed("three") == "\nthree"
    assert stream.flush() == ""


def test_a_lone_cr_at_the_end_of_the_stream_ends_the_line() -> None:
    stream = InertStream()
    assert stream.feed("last\r") + stream.flush() == "last\n"


def test_clean_text_comes_back_as_the_same_object() -> None:
    text = "plain words, no control at all — ünïcode too"
    assert inert(text) is text
    assert InertStream().feed(text) is text
    assert not has_control(text) and has_control("a\rb")


def test_inert_line_keeps_one_line() -> None:
    assert inert_line("model\nid\twith\r\nbreaks\x1b[31m") == "model id with breaks␛[31m"


@given(st.lists(st.text(alphabet=st.characters(max_codepoint=0x200)), max_size=8))
def test_nothing_dangerous_ever_gets_through(pieces: list[str]) -> None:
    stream = InertStream()
    out = "".join(stream.feed(piece) for piece in pieces) + stream.flush()
    assert _safe(out)
    assert _safe(inert("".join(pieces)))
    assert _safe(inert_line("".join(pieces))) and "\n" not in inert_line("".join(pieces))


@given(st.lists(st.text(alphabet=st.sampled_from("ab\x1b[]\r\n\t\x9b\x07")), max_size=8))
def test_streaming_equals_the_whole(pieces: list[str]) -> None:
    stream = InertStream()
    out = "".join(stream.feed(piece) for piece in pieces) + stream.flush()
    assert out == inert("".join(pieces))


@given(st.recursive(st.text() | st.integers() | st.none(), lambda inner: st.lists(inner)))
def test_json_text_is_the_same_value_and_inert(value: object) -> None:
    text = json_text({"reply": value})
    assert json.loads(text) == {"reply": value}
    assert _safe(text) and "\u2028" not in text and "\u2029" not in text


def test_json_text_escapes_what_json_dumps_leaves_raw() -> None:
    raw = json.dumps("\x9b\x7f\u2028é", ensure_ascii=False)
    assert "\x9b" in raw  # the reason json_text exists
    assert json_text("\x9b\x7f\u2028é") == '"\\u009b\\u007f\\u2028é"'


def test_an_empty_delta_between_cr_and_lf_keeps_them_one_line_end() -> None:
    stream = InertStream()
    assert stream.feed("a\r") + stream.feed("") + stream.feed("\nb") + stream.flush() == "a\nb"
