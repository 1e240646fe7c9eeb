"""Chat picker: the chats made in the app (and races), the last used first, each with when it was
last used, its endpoint and model. Type to search titles, models and every message; Enter opens
a chat to carry on where it stopped; F2 renames it, F8 deletes it (after a yes). The one-shot
`ask` runs are left out until Ctrl+G asks for them.

A long history is read a page at a time: the first page is there with the key, the next when
the highlight nears the end; a search runs off the UI thread as you type (the store's full-text
index, tui/engine/store/migrations/v006_chat_search.py) and the newest search's answer wins.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, Protocol

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from tui.app.screens.filter_picker import FilterPicker

TITLE_WIDTH = 64
MODEL_WIDTH = 24  # a details cell longer than this is cut, so the row keeps its date in sight
ENDPOINT_WIDTH = 24
APP_KIND = "app"  # a chat made in the app (the history's APP_CHAT)
RACE_KIND = "race"  # a race's chat, made in the app or by `firsttoken race`
ASK_KIND = "ask"  # a one-shot `ask` run
PAGE = 60  # chats read at a time
SEARCH_DELAY_S = 0.15  # typing pauses this long before the search runs
SUBTITLE = "↑↓ move · Enter open · F2 rename · F8 delete · Esc cancel"


class ChatSource(Protocol):
    """Where the picker reads and changes the saved chats (the app's history, shown inert)."""

    def page(self, kinds: tuple[str, ...], offset: int, limit: int) -> list[dict[str, Any]]: ...

    def search(self, text: str, kinds: tuple[str, ...]) -> list[dict[str, Any]]: ...

    def counts(self) -> dict[str, int]: ...

    def rename(self, chat_id: int, title: str) -> bool: ...

    def delete(self, chat_id: int) -> bool: ...


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
    PLACEHOLDER = "Type to search titles, models and messages…"
    DEFAULT_CSS = """
    ChatPicker > Vertical {
        width: 76;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+g", "toggle_ask_runs", "ask runs", show=False),
        Binding("f2", "rename", "rename", show=False),
        Binding("f8", "delete", "delete", show=False),
    ]

    def __init__(self, source: ChatSource, current: int | None = None) -> None:
        super().__init__()
        self.source = source
        self.current = current
        self.with_ask_runs = False
        self.ask_runs = source.counts().get(ASK_KIND, 0)
        self.chats: list[dict[str, Any]] = []  # what the list shows, in order
        self.search_text = ""
        self._complete = False  # every chat of the listed kinds is read (no more pages)
        self._search_timer: Timer | None = None
        self._searched_text = ""  # the text the list shows the answer to

    @property
    def kinds(self) -> tuple[str, ...]:
        return (APP_KIND, RACE_KIND, ASK_KIND) if self.with_ask_runs else (APP_KIND, RACE_KIND)

    def on_mount(self) -> None:  # (FilterPicker's on_mount runs too: Textual calls each)
        self._say_what_is_hidden()

    def _say_what_is_hidden(self) -> None:
        subtitle = SUBTITLE
        if self.ask_runs:
            runs = f"{self.ask_runs} ask run{'s' if self.ask_runs != 1 else ''}"
            toggle = f"ctrl+g hides the {runs}" if self.with_ask_runs else f"ctrl+g shows {runs}"
            subtitle = f"{subtitle} · {toggle}"
        self.query_one(Vertical).border_subtitle = subtitle

    def action_toggle_ask_runs(self) -> None:
        self.with_ask_runs = not self.with_ask_runs
        self._say_what_is_hidden()
        self._fill(self.query_one("#picker-filter", Input).value)

    # -- what is listed ----------------------------------------------------------------------

    def _fill(self, query: str) -> None:
        """The first page (no text), or a search after a pause in the typing."""
        self.search_text = query.strip()
        if self._search_timer is not None:
            self._search_timer.stop()
        if not self.search_text:
            self._searched_text = ""
            self.chats = self.source.page(self.kinds, 0, PAGE)
            self._complete = len(self.chats) < PAGE
            self._show(keep=None)
            return
        self._search_timer = self.set_timer(SEARCH_DELAY_S, self._search)

    def _search(self) -> None:
        self._run_search(self.search_text, self.kinds)

    @work(thread=True, exclusive=True, group="chat-search")
    def _run_search(self, query: str, kinds: tuple[str, ...]) -> None:
        found = self.source.search(query, kinds)
        self.app.call_from_thread(self._searched, query, found)

    def _searched(self, query: str, found: list[dict[str, Any]]) -> None:
        if query != self.search_text:
            return  # typed on since: a newer search is coming
        self._searched_text = query
        self.chats = found
        self._complete = True
        self._show(keep=None)

    def choose_highlighted(self) -> None:
        """Enter: typed ahead of the search's answer, it waits for that answer (read now) and
        opens its first chat, as the text typed asked."""
        if self.search_text and self._searched_text != self.search_text:
            if self._search_timer is not None:
                self._search_timer.stop()
            self._searched(self.search_text, self.source.search(self.search_text, self.kinds))
        super().choose_highlighted()

    def _more(self) -> None:
        """The next page, once the highlight nears the end of what is read."""
        if self._complete or self.search_text:
            return
        more = self.source.page(self.kinds, len(self.chats), PAGE)
        self._complete = len(more) < PAGE
        if more:
            self.chats += more
            self.query_one(OptionList).add_options([self._option(chat) for chat in more])

    def _show(self, keep: int | None) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        if self.chats:
            options.add_options([self._option(chat) for chat in self.chats])
            ids = [chat["id"] for chat in self.chats]
            wanted = keep if keep in ids else self.current
            options.highlighted = ids.index(wanted) if wanted in ids else 0
        elif self.search_text:
            options.add_option(Option("  no chat holds that", disabled=True))
        elif self.ask_runs and not self.with_ask_runs:
            options.add_option(
                Option("  no chat from the app yet: ctrl+g shows the ask runs", disabled=True)
            )

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index >= len(self.chats) - 5:
            self._more()

    def _option(self, chat: dict[str, Any]) -> Option:
        return Option(self._label(chat, self.search_text.lower()), id=str(chat["id"]))

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
        kind = chat.get("kind", APP_KIND)
        if kind != APP_KIND:
            details.append(f"{kind} run" if kind == ASK_KIND else kind)
        # A second line, so a long title never pushes the details out of sight.
        text.append("\n  " + " · ".join(details), style="dim")
        return text

    def choice_for(self, option_id: str) -> int:
        return int(option_id)

    # -- rename and delete -------------------------------------------------------------------

    def _highlighted(self) -> dict[str, Any] | None:
        index = self.query_one(OptionList).highlighted
        if index is None or index >= len(self.chats):
            return None
        return self.chats[index]

    def action_rename(self) -> None:
        from tui.app.screens.chat_title import ChatTitleScreen

        chat = self._highlighted()
        if chat is None:
            return

        def renamed(title: str | None) -> None:
            if title and self.source.rename(chat["id"], title):
                chat["title"] = title
                self._show(keep=chat["id"])

        self.app.push_screen(ChatTitleScreen(str(chat["title"])), renamed)

    def action_delete(self) -> None:
        from tui.app.screens.confirm import ConfirmScreen

        chat = self._highlighted()
        if chat is None:
            return
        title = one_line(str(chat["title"]), 40)
        question = (
            f"Delete the chat “{title}”? Its messages go; the latency records of its requests "
            "stay in the history."
        )

        def answered(yes: bool | None) -> None:
            if yes and self.source.delete(chat["id"]):
                index = self.chats.index(chat)
                self.chats.remove(chat)
                following = self.chats[min(index, len(self.chats) - 1)] if self.chats else None
                self._show(keep=following["id"] if following else None)

        self.app.push_screen(ConfirmScreen(question, "delete"), answered)
