"""Help: every key binding in one table, grouped, then what the latency panel's figures mean;
closed with Esc (or F1 / ? again)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Vertical, VerticalScroll
from textual.widgets import Label, Static

from tui.app.panel.figure_meanings import FIGURE_MEANINGS
from tui.app.screens.modal_once import ModalOnce

# (key as displayed, what it does, group heading)
HelpEntry = tuple[str, str, str]
FIGURES_HEADING = "What the figures mean"


class HelpScreen(ModalOnce[None]):
    """Shows the bindings it is given, in the order given, grouped by their third field."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        background: $background 60%;
    }
    HelpScreen > Vertical {
        width: 72;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: round $primary;
        border-title-color: $primary;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
        padding: 1 2;
    }
    HelpScreen VerticalScroll {
        height: auto;
        max-height: 100%;
        scrollbar-size-vertical: 1;
    }
    HelpScreen .help-group {
        color: $accent;
        text-style: bold;
        margin: 1 0 0 0;
        width: 100%;
    }
    HelpScreen .help-group.-first {
        margin-top: 0;
    }
    HelpScreen Grid {
        grid-size: 2;
        grid-columns: 20 1fr;
        grid-gutter: 0 2;
        height: auto;
    }
    HelpScreen .help-key {
        color: $primary;
        text-style: bold;
        width: 100%;
        text-align: right;
    }
    HelpScreen .help-description {
        color: $foreground;
        width: 100%;
    }
    HelpScreen .help-empty {
        color: $text-muted;
        padding: 1 0;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("f1", "close", "Close", show=False),
        Binding("question_mark", "close", "Close", show=False),
    ]

    def __init__(
        self,
        bindings: Sequence[HelpEntry],
        title: str = "Keys",
        meanings: Sequence[tuple[str, str]] = FIGURE_MEANINGS,
    ) -> None:
        super().__init__()
        self.entries = list(bindings)
        self.entries += [(figure, meaning, FIGURES_HEADING) for figure, meaning in meanings]
        self.title_text = title

    def compose(self) -> ComposeResult:
        groups: dict[str, list[HelpEntry]] = {}
        for entry in self.entries:
            groups.setdefault(entry[2], []).append(entry)
        with Vertical() as frame:
            frame.border_title = self.title_text
            frame.border_subtitle = "Esc to close"
            with VerticalScroll(can_focus=True):
                if not groups:
                    yield Static("No key bindings.", classes="help-empty")
                for number, (group, entries) in enumerate(groups.items()):
                    classes = "help-group -first" if number == 0 else "help-group"
                    yield Label(group, classes=classes, markup=False)
                    with Grid():
                        for key, description, _ in entries:
                            yield Label(key, classes="help-key", markup=False)
                            yield Label(description, classes="help-description", markup=False)

    def on_mount(self) -> None:
        # Size the key column to the longest key so descriptions line up without wasting space.
        widest = max((len(key) for key, _, _ in self.entries), default=8)
        for grid in self.query(Grid):
            grid.styles.grid_columns = f"{min(widest, 28)} 1fr"
        self.query_one(VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
