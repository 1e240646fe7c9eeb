"""Model picker: type to filter, arrows to move, Enter to choose, Esc to keep the current one.

Servers such as llama.cpp accept any model name, so a filter that matches no listed model
can still be chosen as a name of its own ("Use 'my-model'").
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets.option_list import Option

from tui.app.screens.filter_picker import FilterPicker

_CUSTOM_PREFIX = "\x00custom:"  # option ids of "use the typed name" entries


class ModelPicker(FilterPicker[str]):
    """Dismisses with the chosen model name, or None when cancelled."""

    TITLE = "Switch model"
    PLACEHOLDER = "Type to filter models…"

    def __init__(self, models: Sequence[str], current: str | None = None) -> None:
        super().__init__()
        # Keep the order given, drop duplicates; the current model is listed even if the
        # server's list leaves it out, so the list always shows what is in use.
        names = list(dict.fromkeys(models))
        if current and current not in names:
            names.insert(0, current)
        self.models = names
        self.current = current

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

    def options_for(self, query: str) -> tuple[list[Option], int]:
        needle = query.strip().lower()
        matches = [name for name in self.models if needle in name.lower()]
        options = [Option(self._label(name, needle), id=name) for name in matches]
        typed = query.strip()
        if typed and typed not in self.models:
            options.append(
                Option(Text(f"  Use '{typed}'", style="italic"), id=_CUSTOM_PREFIX + typed)
            )
        return options, matches.index(self.current) if self.current in matches else 0

    def choice_for(self, option_id: str) -> str:
        return option_id.removeprefix(_CUSTOM_PREFIX)
