"""Race this chat against another model, endpoint or setting: one line, Enter starts it.

Dismisses with what was typed, or None (Esc)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Static

from tui.app.screens.modal_once import ModalOnce

HINT = (
    "Every message is then sent to this chat's model and to the target, side by side.\n"
    "A target: MODEL, MODEL@https://host/v1 or PROVIDER:MODEL, and settings after commas;\n"
    "settings alone race this chat's model against itself changed: trim=off, stream=off."
)


class RacePromptScreen(ModalOnce[str | None]):
    DEFAULT_CSS = """
    RacePromptScreen { align: center middle; background: $background 60%; }
    RacePromptScreen > Vertical {
        width: 90; max-width: 95%; height: auto;
        border: round $primary; border-title-color: $primary; border-title-style: bold;
        background: $surface; padding: 0 1;
    }
    RacePromptScreen .hint { color: $text-muted; margin: 1 0; }
    RacePromptScreen Input { margin-bottom: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def __init__(self, model: str, suggestion: str) -> None:
        super().__init__()
        self.model = model
        self.suggestion = suggestion

    def compose(self) -> ComposeResult:
        with Vertical() as frame:
            frame.border_title = f"Race this chat ({self.model}) against…"
            yield Static(HINT, markup=False, classes="hint")
            yield Input(self.suggestion, placeholder="MODEL or trim=off", id="race-target")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
