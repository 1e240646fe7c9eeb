"""A yes-or-no question before something that cannot be undone: Y or Enter on the button says
yes, N or Esc says no. Dismisses with True or False."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from tui.app.screens.modal_once import ModalOnce


class ConfirmScreen(ModalOnce[bool]):
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; background: $background 60%; }
    ConfirmScreen > Vertical {
        width: 64; max-width: 95%; height: auto;
        border: round $error; background: $surface; padding: 1 2;
    }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmScreen Button { margin-left: 2; min-width: 10; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("n,escape", "answer(False)", "no"),
    ]

    def __init__(self, question: str, verb: str) -> None:
        super().__init__()
        self.question = question
        self.verb = verb

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, markup=False)
            with Horizontal():
                yield Button("Keep it (n)", id="no", compact=True)
                yield Button(
                    f"{self.verb.capitalize()} (y)", id="yes", variant="error", compact=True
                )

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()  # Enter alone never deletes

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
