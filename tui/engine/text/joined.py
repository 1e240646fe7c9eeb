"""Text that arrives in many small pieces (a streamed reply, a delta at a time), kept as a few
long strings: a piece costs about its own characters, not a string object of its own.

Readable from another thread while it grows: the pair of lists is replaced whole when the
recent pieces are joined, never changed in place except by an append.
"""

from __future__ import annotations

# Pieces joined into one string at a time: the joins copy each character about once.
JOIN_EVERY = 1024


class JoinedText:
    __slots__ = ("_pair",)

    def __init__(self) -> None:
        self._pair: tuple[list[str], list[str]] = ([], [])

    def add(self, text: str) -> None:
        joined, recent = self._pair
        recent.append(text)
        if len(recent) >= JOIN_EVERY:
            self._pair = ([*joined, "".join(recent)], [])

    def text(self) -> str:
        joined, recent = self._pair
        return "".join([*joined, *recent])  # one copy of the whole text, not two

    def __bool__(self) -> bool:
        joined, recent = self._pair
        return bool(joined or recent)
