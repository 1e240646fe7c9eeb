"""A modal screen that answers once.

Keys typed quickly keep reaching a modal until it is off the stack, and a second answer would
be a second `dismiss`, which pops whatever screen is on top by then: the chat screen itself
(Textual raises, and the app ends) or a modal opened since (it closes unasked). Once this
screen is not the active one, what it is asked to answer is ignored.
"""

from __future__ import annotations

from typing import TypeVar

from textual.await_complete import AwaitComplete
from textual.screen import ModalScreen

Result = TypeVar("Result")


class ModalOnce(ModalScreen[Result]):
    def dismiss(self, result: Result | None = None) -> AwaitComplete:
        if not self.is_active:
            return AwaitComplete()  # answered already (or never shown): nothing to pop
        return super().dismiss(result)
