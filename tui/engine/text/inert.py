"""Untrusted text made inert for a terminal: every control character becomes a visible stand-in.

Everything a server sends (reply and reasoning text, error bodies, model ids) and everything read
back from the history file is untrusted: a prompt-injected document can make a model write
`ESC ] 52 ; c ; <base64> BEL` (set the clipboard), `ESC ] 0 ; title BEL` or `ESC [ 2 J`. No
escape sequence can run without its introducer, so each control character is replaced by a
character that only looks like it:

- C0 controls (U+0000-U+001F) other than newline and tab, and DEL: the Unicode control pictures
  (`␛` for ESC, `␇` for BEL, `␀` for NUL, `␡` for DEL), one column wide like the rest of the text;
- C1 controls (U+0080-U+009F, e.g. the 8-bit CSI U+009B): the four characters `\\x9b`, since
  there are no pictures for them;
- CR: a CRLF pair becomes LF; a lone CR becomes LF too, so it can never return the cursor and
  overwrite the line it ends.

`inert` is for whole strings; `InertStream` for streamed deltas (it holds back a trailing CR
until it knows whether LF follows); `inert_line` for one-line places (table cells, error lines:
line breaks and tabs become spaces); `json_text` for JSON written where a terminal may read it.
The text itself is never changed where it is stored: sanitise on display.
"""

from __future__ import annotations

import json
import re
from typing import Any

_PICTURES = 0x2400  # U+2400 CONTROL PICTURE FOR NULL; U+2400 + n pictures C0 control n


def _table(*, keep_layout: bool) -> dict[int, str]:
    table: dict[int, str] = {code: chr(_PICTURES + code) for code in range(0x20)}
    table[0x7F] = "\u2421"  # ␡
    for code in range(0x80, 0xA0):
        table[code] = f"\\x{code:02x}"
    if keep_layout:
        del table[0x09], table[0x0A]
    else:
        table[0x09] = table[0x0A] = " "
    del table[0x0D]  # CR is resolved before the table applies (see _lines)
    return table


_TABLE = _table(keep_layout=True)
_LINE_TABLE = _table(keep_layout=False)
# Any character the table would change, or CR: the fast path is one C-level search.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LINE_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# What JSON leaves raw that a terminal or a JavaScript reader would act on.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029]")


def _lines(text: str) -> str:
    """CRLF and a lone CR both end a line (a lone CR must not overwrite the line it ends)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def inert(text: str) -> str:
    """`text` with every control but newline and tab replaced by a visible stand-in."""
    if _CONTROL.search(text) is None:
        return text
    return _lines(text).translate(_TABLE)


def inert_line(text: str) -> str:
    """`text` for one line of a table or message: controls shown, line breaks and tabs as
    spaces (CRLF as one space)."""
    if _LINE_CONTROL.search(text) is None:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n").translate(_LINE_TABLE)


def has_control(text: str) -> bool:
    """Whether `text` holds a control character that `inert` would replace (CR included)."""
    return _CONTROL.search(text) is not None


class InertStream:
    """`inert` over a stream of deltas: a CRLF split between two deltas is still one line end.

    `feed()` returns what may be written now; `flush()` what is left at the end of the stream.
    """

    __slots__ = ("_cr",)

    def __init__(self) -> None:
        self._cr = False  # the last delta ended with CR: it becomes LF, and LF right after it
        # belongs to it

    def feed(self, text: str) -> str:
        if not text:  # an empty delta between CR and LF must not split the pair
            return text
        if self._cr:
            self._cr = False
            text = text[1:] if text.startswith("\n") else text
            prefix = "\n"
        else:
            prefix = ""
        if _CONTROL.search(text) is None:
            return prefix + text if prefix else text
        if text.endswith("\r"):
            self._cr = True
            text = text[:-1]
        return prefix + _lines(text).translate(_TABLE)

    def flush(self) -> str:
        if self._cr:
            self._cr = False
            return "\n"
        return ""


def _escape_json(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_text(value: Any, **options: Any) -> str:
    """`json.dumps(value, ensure_ascii=False)` with DEL, the C1 controls and U+2028/U+2029
    escaped as `\\uXXXX` too: the same JSON value, readable, and inert on a terminal. (JSON
    always escapes the C0 controls; outside strings it has no such characters, so escaping
    them wherever they occur keeps the document valid.)"""
    text = json.dumps(value, ensure_ascii=False, **options)
    return _JSON_UNSAFE.sub(_escape_json, text)
