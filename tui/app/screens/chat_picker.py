"""Chat picker: the saved chats, newest first; type to filter by title or model, Enter to
open one and carry on where it stopped."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets.option_list import Option

from tui.app.screens.filter_picker import FilterPicker

TITLE_WIDTH = 64


def when(epoch: float, now: float | None = None) -> str:
    """A chat's start, as short as it can be told apart: the time today, else the date."""
    now = time.time() if now is None else now
    started, today = time.localtime(epoch), time.localtime(now)
    if started[:3] == today[:3]:
        return time.strftime("%H:%M", started)
    if started.tm_year == today.tm_year:
        return time.strftime("%b %d", started)
    return time.strftime("%Y-%m-%d", started)


def one_line(title: str, width: int) -> str:
    flat = " ".join(title.split()) or "(untitled)"
    return flat if len(flat) <= width else flat[: width - 1] + "…"


class ChatPicker(FilterPicker[int]):
    """Dismisses with the chosen chat's id, or None when cancelled."""

    TITLE = "Open a saved chat"
    PLACEHOLDER = "Type to filter by title or model…"
    DEFAULT_CSS = """
    ChatPicker > Vertical {
        width: 72;
    }
    """

    def __init__(self, chats: Sequence[dict[str, Any]], current: int | None = None) -> None:
        super().__init__()
        self.chats = list(chats)  # Store.chats(): newest first
        self.current = current

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
        details = f"{chat['model']} · {count} message{'s' if count != 1 else ''}"
        # A second line, so a long title never pushes the details out of sight.
        text.append(f"\n  {details} · {when(chat['created_at_epoch'])}", style="dim")
        return text

    def options_for(self, query: str) -> tuple[list[Option], int]:
        needle = query.strip().lower()
        matches = [
            chat
            for chat in self.chats
            if needle in str(chat["title"]).lower() or needle in str(chat["model"]).lower()
        ]
        ids = [chat["id"] for chat in matches]
        options = [Option(self._label(chat, needle), id=str(chat["id"])) for chat in matches]
        return options, ids.index(self.current) if self.current in ids else 0

    def choice_for(self, option_id: str) -> int:
        return int(option_id)
