"""Model picker: type to filter, arrows to move, Enter to choose, Esc to keep the current one.

Servers such as llama.cpp accept any model name, so a filter that matches no listed model
can still be chosen as a name of its own ("Use 'my-model'").

The ids are the server's, exactly: each is shown (and filtered) as inert text, and choosing it
returns the id itself, which is what the next request must name.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets.option_list import Option

from tui.app.screens.filter_picker import FilterPicker
from tui.app.untrusted import shown_line

_CUSTOM_PREFIX = "custom:"  # option ids of "use the typed name" entries
_LISTED_PREFIX = "listed:"  # option ids of the models given, by their place in the list


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

        self.shown = [shown_line(name) for name in names]  # what the list says of each

    def _label(self, place: int, query: str) -> Text:
        name = self.shown[place]
        current = self.models[place] == self.current
        marker = "● " if current else "  "
        text = Text(marker + name)
        if current:
            text.stylize("bold", 0, len(text))
        if query:
            start = name.lower().find(query.lower())
            if start >= 0:
                offset = len(marker) + start
                text.stylize("bold underline", offset, offset + len(query))
        return text

    def options_for(self, query: str) -> tuple[list[Option], int]:
        needle = query.strip().lower()
        places = [n for n, name in enumerate(self.shown) if needle in name.lower()]
        options = [Option(self._label(n, needle), id=f"{_LISTED_PREFIX}{n}") for n in places]
        typed = query.strip()
        if typed and typed not in self.models and typed not in self.shown:
            label = Text(f"  Use '{shown_line(typed)}'", style="italic")
            options.append(Option(label, id=_CUSTOM_PREFIX + typed))
        current = [n for n in places if self.models[n] == self.current]
        return options, places.index(current[0]) if current else 0

    def choice_for(self, option_id: str) -> str:
        if option_id.startswith(_LISTED_PREFIX):
            return self.models[int(option_id.removeprefix(_LISTED_PREFIX))]
        return option_id.removeprefix(_CUSTOM_PREFIX)
