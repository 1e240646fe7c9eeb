"""Model picker: type to filter, arrows to move, Enter to choose, Esc to keep the current one.

Servers such as llama.cpp accept any model name, so a filter that matches no listed model
can still be chosen as a name of its own ("Use 'my-model'").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

_CUSTOM_PREFIX = "\x00custom:"  # option ids of "use the typed name" entries


class ModelPicker(ModalScreen[str | None]):
    """Dismisses with the chosen model name, or None when cancelled."""

    DEFAULT_CSS = """
    ModelPicker {
        align: center middle;
        background: $background 60%;
    }
    ModelPicker > Vertical {
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
    ModelPicker Input {
        border: none;
        height: 1;
        padding: 0 1;
        background: $panel;
        margin: 1 0;
    }
    ModelPicker Input:focus {
        border: none;
        background: $panel-lighten-1;
    }
    ModelPicker OptionList > .option-list--option-highlighted {
        background: $primary 30%;
    }
    ModelPicker OptionList {
        height: auto;
        max-height: 20;
        border: none;
        background: $surface;
        padding: 0;
        margin-bottom: 1;
    }
    ModelPicker OptionList:focus {
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

    def __init__(self, models: Sequence[str], current: str | None = None) -> None:
        super().__init__()
        # Keep the order given, drop duplicates; the current model is listed even if the
        # server no longer reports it, so the list always shows what is in use.
        names = list(dict.fromkeys(models))
        if current and current not in names:
            names.insert(0, current)
        self.models = names
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical() as frame:
            frame.border_title = "Switch model"
            frame.border_subtitle = "↑↓ move · Enter choose · Esc cancel"
            yield Input(placeholder="Type to filter models…", id="model-filter")
            yield OptionList(id="model-options")

    def on_mount(self) -> None:
        self._fill("")
        self.query_one(Input).focus()

    def _label(self, name: str, query: str) -> Text:
        marker = "● " if name == self.current else "  "
        text = Text(marker + name)
        if name == self.current:
            text.stylize("bold", 0, len(text))
        if query:
            start = name.lower().find(query.lower())
            if start >= 0:
                offset = len(marker) + start
                text.stylize("bold underline", offset, offset + len(query))
        return text

    def _fill(self, query: str) -> None:
        options = self.query_one(OptionList)
        needle = query.strip().lower()
        matches = [name for name in self.models if needle in name.lower()]
        options.clear_options()
        options.add_options(Option(self._label(name, needle), id=name) for name in matches)
        typed = query.strip()
        if typed and typed not in self.models:
            options.add_option(
                Option(Text(f"  Use '{typed}'", style="italic"), id=_CUSTOM_PREFIX + typed)
            )
        if options.option_count:
            index = matches.index(self.current) if self.current in matches else 0
            options.highlighted = index

    @on(Input.Changed, "#model-filter")
    def _filter(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(Input.Submitted, "#model-filter")
    def _submit(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None:
            self._choose(options.get_option_at_index(options.highlighted).id)

    @on(OptionList.OptionSelected, "#model-options")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option.id)

    def _choose(self, option_id: str | None) -> None:
        if option_id is None:
            return
        self.dismiss(option_id.removeprefix(_CUSTOM_PREFIX))

    def action_move(self, steps: int) -> None:
        options = self.query_one(OptionList)
        if not options.option_count:
            return
        current = options.highlighted if options.highlighted is not None else 0
        options.highlighted = max(0, min(options.option_count - 1, current + steps))

    def action_cancel(self) -> None:
        self.dismiss(None)
