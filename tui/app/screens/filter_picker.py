"""A modal list to pick from: type to filter, arrows to move, Enter to choose, Esc to cancel.

The model picker and the chat picker are this screen with their own options; each says what
its options are for a filter text and what choosing one returns.
"""

from __future__ import annotations

from typing import ClassVar, Generic, TypeVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from tui.app.screens.modal_once import ModalOnce

Choice = TypeVar("Choice")


class FilterPicker(ModalOnce[Choice | None], Generic[Choice]):
    """Dismisses with `choice_for(option id)`, or None when cancelled."""

    DEFAULT_CSS = """
    FilterPicker {
        align: center middle;
        background: $background 60%;
    }
    FilterPicker > Vertical {
        width: 60;
        max-width: 95%;
        height: auto;
        max-height: 80%;
        border: round $primary;
        border-title-color: $primary;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
        padding: 0 1;
    }
    FilterPicker Input {
        border: none;
        height: 1;
        padding: 0 1;
        background: $panel;
        margin: 1 0;
    }
    FilterPicker Input:focus {
        border: none;
        background: $panel-lighten-1;
    }
    FilterPicker OptionList > .option-list--option-highlighted {
        background: $primary 30%;
    }
    FilterPicker OptionList {
        height: auto;
        max-height: 20;
        border: none;
        background: $surface;
        padding: 0;
        margin-bottom: 1;
    }
    FilterPicker OptionList:focus {
        border: none;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("down", "move(1)", "Down", show=False),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("pagedown", "move(10)", show=False),
        Binding("pageup", "move(-10)", show=False),
    ]

    TITLE: ClassVar[str] = ""
    PLACEHOLDER: ClassVar[str] = "Type to filter…"

    def compose(self) -> ComposeResult:
        with Vertical() as frame:
            frame.border_title = self.TITLE
            frame.border_subtitle = "↑↓ move · Enter choose · Esc cancel"
            yield Input(placeholder=self.PLACEHOLDER, id="picker-filter")
            yield OptionList(id="picker-options")

    def on_mount(self) -> None:
        self._fill("")
        self.query_one(Input).focus()

    # -- what a picker says ------------------------------------------------------------------

    def options_for(self, query: str) -> tuple[list[Option], int]:
        """The options matching `query`, and which of them to highlight first."""
        raise NotImplementedError

    def choice_for(self, option_id: str) -> Choice:
        raise NotImplementedError

    # -- the common part ---------------------------------------------------------------------

    def _fill(self, query: str) -> None:
        options = self.query_one(OptionList)
        shown, highlighted = self.options_for(query)
        options.clear_options()
        options.add_options(shown)
        if options.option_count:
            options.highlighted = highlighted

    @on(Input.Changed, "#picker-filter")
    def _filter(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(Input.Submitted, "#picker-filter")
    def _submit(self) -> None:
        self.choose_highlighted()

    def choose_highlighted(self) -> None:
        """Enter in the filter: the highlighted option is the choice."""
        options = self.query_one(OptionList)
        if options.highlighted is not None:
            self._choose(options.get_option_at_index(options.highlighted).id)

    @on(OptionList.OptionSelected, "#picker-options")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option.id)

    def _choose(self, option_id: str | None) -> None:
        if option_id is not None:
            self.dismiss(self.choice_for(option_id))

    def action_move(self, steps: int) -> None:
        options = self.query_one(OptionList)
        if not options.option_count:
            return
        current = options.highlighted if options.highlighted is not None else 0
        options.highlighted = max(0, min(options.option_count - 1, current + steps))

    def action_cancel(self) -> None:
        self.dismiss(None)
