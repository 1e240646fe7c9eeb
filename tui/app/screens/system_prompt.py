"""Edit this chat's system prompt: F9 (the key that opened it) saves, Esc cancels.

F9 reaches the app in every terminal; Ctrl+S is often eaten by XON/XOFF flow control, so it
saves too where it arrives but is never the one shown. Tab reaches the buttons.

Dismisses with the new prompt (an empty string means "no system prompt"), or None when
cancelled, so the caller can tell "cleared" from "left unchanged".
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static, TextArea

from tui.app.screens.modal_once import ModalOnce

SAVE_KEYS = "f9 save · esc cancel"


class SystemPromptScreen(ModalOnce[str | None]):
    DEFAULT_CSS = """
    SystemPromptScreen {
        align: center middle;
        background: $background 60%;
    }
    SystemPromptScreen > Vertical {
        width: 84;
        max-width: 95%;
        height: 24;
        max-height: 90%;
        border: round $primary;
        border-title-color: $primary;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
        padding: 0 1;
    }
    SystemPromptScreen .hint {
        color: $text-muted;
        margin: 1 0;
    }
    SystemPromptScreen TextArea {
        height: 1fr;
        border: round $panel-lighten-2;
        background: $surface;
    }
    SystemPromptScreen TextArea:focus {
        border: round $primary;
    }
    SystemPromptScreen Horizontal {
        height: auto;
        align-horizontal: right;
        margin: 1 0;
    }
    SystemPromptScreen Button {
        margin-left: 2;
        min-width: 10;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "cancel"),
        # Not priority bindings: those act as the key is read, before the characters typed
        # ahead of it reach the editor ("be brief" + F9 in one read would save an empty prompt).
        Binding("f9", "save", "save"),
        Binding("ctrl+s", "save", "save", show=False),
    ]

    def __init__(self, current: str | None = None) -> None:
        super().__init__()
        self.current = current or ""

    def compose(self) -> ComposeResult:
        with Vertical() as frame:
            frame.border_title = "System prompt for this chat"
            frame.border_subtitle = SAVE_KEYS
            yield Static(
                "Sent first in every request of this chat. Leave empty for none.\n"
                f"{SAVE_KEYS} · tab reaches the buttons",
                classes="hint",
            )
            yield TextArea(
                self.current, id="system-prompt", soft_wrap=True, show_line_numbers=False
            )
            with Horizontal():
                yield Button("Cancel", id="cancel", variant="default", compact=True)
                yield Button("Save", id="save", variant="primary", compact=True)

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.focus()
        area.move_cursor(area.document.end)

    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text.strip())

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
