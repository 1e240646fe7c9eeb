"""The streamed reply between the network side and whatever shows it.

`feed` (any thread, per delta) keeps the exact text (the history's drafts read it) and passes
the shown text on: inert (every control character a visible stand-in, tui/engine/text/inert.py)
unless the surface asked for the raw text (`ask --raw`). A list append and one C-level search
per delta: no widget call, no SQLite, no join of the whole reply.

The kept text is joined a thousand deltas at a time (tui/engine/text/joined.py), so a long
reply costs about its own size in memory rather than one small string object per delta.
"""

from __future__ import annotations

from collections.abc import Callable

from tui.engine.text.inert import InertStream
from tui.engine.text.joined import JoinedText


def _nothing(_text: str) -> None:
    return None


class ReplyIntake:
    __slots__ = ("_answer", "_inert", "_inert_reasoning", "_thinking", "show", "show_reasoning")

    def __init__(
        self,
        show: Callable[[str], None],
        show_reasoning: Callable[[str], None] = _nothing,
        *,
        raw: bool = False,
    ) -> None:
        self._answer = JoinedText()
        self._thinking = JoinedText()
        self.show = show
        self.show_reasoning = show_reasoning
        self._inert = None if raw else InertStream()
        self._inert_reasoning = None if raw else InertStream()

    def feed(self, text: str) -> None:
        self._answer.add(text)
        shown = self._inert.feed(text) if self._inert is not None else text
        if shown:
            self.show(shown)

    def feed_reasoning(self, text: str) -> None:
        self._thinking.add(text)
        shown = self._inert_reasoning.feed(text) if self._inert_reasoning is not None else text
        if shown:
            self.show_reasoning(shown)

    def end_reasoning(self) -> None:
        """The thinking is over (the answer starts): pass on what its inert stream held back."""
        if self._inert_reasoning is not None and (tail := self._inert_reasoning.flush()):
            self.show_reasoning(tail)

    def end(self) -> None:
        """The stream is over: pass on what the inert streams held back."""
        if self._inert is not None and (tail := self._inert.flush()):
            self.show(tail)
        self.end_reasoning()

    def text(self) -> str:
        """The exact answer so far (safe from any thread)."""
        return self._answer.text()

    def reasoning(self) -> str:
        """The exact thinking so far (safe from any thread)."""
        return self._thinking.text()
