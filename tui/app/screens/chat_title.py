"""A saved chat's title, the user's own: Enter saves, Esc leaves it as it was. Dismisses with
the new title, or None."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input

from tui.app.screens.modal_once import ModalOnce

TITLE_LIMIT = 200


class ChatTitleScreen(ModalOnce[str | None]):
    DEFAULT_CSS = """
    ChatTitleScreen { align: center middle; background: $background 60%; }
    ChatTitleScreen > Vertical {
        width: 72; max-width: 95%; height: auto;
        border: round $primary; border-title-color: $primary; border-title-style: bold;
        background: $surface; padding: 1 1 0 1;
    }
    ChatTitleScreen Input { margin-bottom: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.current = title

    def compose(self) -> ComposeResult:
        with Vertical() as frame:
            frame.border_title = "Rename the chat"
            frame.border_subtitle = "enter save · esc cancel"
            yield Input(self.current, max_length=TITLE_LIMIT, id="chat-title")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        title = " ".join(event.value.split())
        self.dismiss(title or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
