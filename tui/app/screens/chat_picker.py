"""Chat picker: the chats made in the app, the last used first, each with when it was last
used, its endpoint and model; type to filter by title, model or endpoint, Enter to open one and
carry on where it stopped. The one-shot `ask` runs are left out until Ctrl+G asks for them."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input
from textual.widgets.option_list import Option

from tui.app.screens.filter_picker import FilterPicker

TITLE_WIDTH = 64
MODEL_WIDTH = 24  # a details cell longer than this is cut, so the row keeps its date in sight
ENDPOINT_WIDTH = 24
APP_KIND = "app"  # a chat made in the app (the history's APP_CHAT); any other is a headless run
SUBTITLE = "↑↓ move · Enter choose · Esc cancel"


def when(epoch: float, now: float | None = None) -> str:
    """A date and time as short as it can be told apart: today, yesterday, this year's date,
    else the full date."""
    now = time.time() if now is None else now
    then, today = time.localtime(epoch), time.localtime(now)
    clock = time.strftime("%H:%M", then)
    if then[:3] == today[:3]:
        return f"today {clock}"
    if then[:3] == time.localtime(now - 86400)[:3]:
        return f"yesterday {clock}"
    if then.tm_year == today.tm_year:
        return time.strftime("%b %d %H:%M", then)
    return time.strftime("%Y-%m-%d", then)


def one_line(title: str, width: int) -> str:
    flat = " ".join(title.split()) or "(untitled)"
    return flat if len(flat) <= width else flat[: width - 1] + "…"


class ChatPicker(FilterPicker[int]):
    """Dismisses with the chosen chat's id, or None when cancelled."""

    TITLE = "Open a saved chat"
    PLACEHOLDER = "Type to filter by title, model or endpoint…"
    DEFAULT_CSS = """
    ChatPicker > Vertical {
        width: 72;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+g", "toggle_ask_runs", "ask runs", show=False),
    ]

    def __init__(self, chats: Sequence[dict[str, Any]], current: int | None = None) -> None:
        super().__init__()
        self.chats = list(chats)  # Store.chats(): the last used first
        self.current = current
        self.with_ask_runs = False
        self.ask_runs = sum(1 for chat in self.chats if chat.get("kind", APP_KIND) != APP_KIND)

    def on_mount(self) -> None:  # (FilterPicker's on_mount runs too: Textual calls each)
        self._say_what_is_hidden()

    def _say_what_is_hidden(self) -> None:
        if not self.ask_runs:
            return
        runs = f"{self.ask_runs} ask run{'s' if self.ask_runs != 1 else ''}"
        toggle = f"ctrl+g hides the {runs}" if self.with_ask_runs else f"ctrl+g shows {runs}"
        self.query_one(Vertical).border_subtitle = f"{SUBTITLE} · {toggle}"

    def action_toggle_ask_runs(self) -> None:
        self.with_ask_runs = not self.with_ask_runs
        self._say_what_is_hidden()
        self._fill(self.query_one("#picker-filter", Input).value)

    def _label(self, chat: dict[str, Any], needle: str) -> Text:
        marker = "● " if chat["id"] == self.current else "  "
        title = one_line(str(chat["title"]), TITLE_WIDTH)
        text = Text(marker + title, style="bold" if marker.strip() else "")
        if needle:
            start = title.lower().find(needle)
            if start >= 0:
                offset = len(marker) + start
                text.stylize("bold underline", offset, offset + len(needle))
        count = chat["message_count"]
        used = chat.get("last_used_epoch") or chat["created_at_epoch"]
        details = [
            when(used),
            one_line(str(chat.get("endpoint_host") or "no request yet"), ENDPOINT_WIDTH),
            one_line(str(chat["model"]), MODEL_WIDTH),
            f"{count} message{'s' if count != 1 else ''}",
        ]
        if chat.get("kind", APP_KIND) != APP_KIND:
            details.append(f"{chat['kind']} run")
        # A second line, so a long title never pushes the details out of sight.
        text.append("\n  " + " · ".join(details), style="dim")
        return text

    def _listed(self, chat: dict[str, Any]) -> bool:
        listed = self.with_ask_runs or chat.get("kind", APP_KIND) == APP_KIND
        return listed or chat["id"] == self.current

    def options_for(self, query: str) -> tuple[list[Option], int]:
        needle = query.strip().lower()
        matches = [
            chat
            for chat in self.chats
            if self._listed(chat)
            and any(
                needle in str(chat.get(name) or "").lower()
                for name in ("title", "model", "endpoint_host")
            )
        ]
        ids = [chat["id"] for chat in matches]
        options = [Option(self._label(chat, needle), id=str(chat["id"])) for chat in matches]
        if not options and not needle and self.ask_runs and not self.with_ask_runs:
            hint = "  no chat from the app yet: ctrl+g shows the ask runs"
            options = [Option(hint, disabled=True)]
        return options, ids.index(self.current) if self.current in ids else 0

    def choice_for(self, option_id: str) -> int:
        return int(option_id)
