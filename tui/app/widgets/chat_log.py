"""The scrolling chat pane. Once its content overflows it is anchored to the bottom, so it
follows a streaming reply without a scroll call per chunk; scrolling up releases the anchor
(Textual's own rule) and scrolling back to the end re-engages it.

Not anchoring before the content overflows keeps a short chat at the top and still: an
anchored pane bottom-aligns its content, so every growing line would shift (and repaint)
everything above it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import AwaitMount
from textual.widgets import Static

from tui.app.widgets.message_view import (
    AssistantMessage,
    ErrorMessage,
    MessageView,
    PlainMessage,
    message_text,
)
from tui.app.widgets.single_layout import StoreSizeWithoutRelayout


class ChatLog(StoreSizeWithoutRelayout, VerticalScroll):
    def on_mount(self) -> None:
        self.show_welcome()

    def _size_updated(
        self, size: Any, virtual_size: Any, container_size: Any, layout: bool = True
    ) -> bool:
        changed = super()._size_updated(size, virtual_size, container_size, layout)
        if changed:
            self._anchor_on_overflow()  # the virtual_size watcher does not run (see mixin)
        return changed

    def _anchor_on_overflow(self) -> None:
        if (
            not self.is_anchored
            and self.virtual_size.height > self.scrollable_content_region.height
        ):
            self.anchor()

    def show_welcome(self) -> None:
        text = Text.assemble(
            ("firsttoken", "bold"),
            ("  ask anything: the panel shows time to first token, live.\n", "dim"),
            ("enter", "bold"),
            (" send  ", "dim"),
            ("ctrl+j", "bold"),
            (" newline  ", "dim"),
            ("f6", "bold"),
            (" load a bloated sample chat  ", "dim"),
            ("f1", "bold"),
            (" all keys", "dim"),
        )
        self.mount(Static(text, id="welcome"))

    def _drop_welcome(self) -> None:
        for welcome in self.query("#welcome"):
            welcome.remove()

    def add_message(self, index: int, message: dict) -> MessageView:
        self._drop_welcome()
        role = str(message.get("role", "user"))
        view: MessageView
        if role == "assistant":
            view = AssistantMessage(index, message_text(message))
        else:
            view = PlainMessage(index, role, message_text(message))
        self.mount(view)
        return view

    def add_messages(self, messages: Iterable[dict], start: int = 0) -> None:
        self._drop_welcome()
        views: list[MessageView] = []
        for offset, message in enumerate(messages):
            role = str(message.get("role", "user"))
            if role == "assistant":
                views.append(AssistantMessage(start + offset, message_text(message)))
            else:
                views.append(PlainMessage(start + offset, role, message_text(message)))
        if views:
            self.mount_all(views)

    def mount_reply(self, view: AssistantMessage) -> AwaitMount:
        self._drop_welcome()
        return self.mount(view)

    def add_assistant(self, index: int, model: str) -> AssistantMessage:
        self._drop_welcome()
        view = AssistantMessage(index, "", model=model)
        self.mount(view)
        return view

    def add_error(self, kind: str, hint: str) -> ErrorMessage:
        view = ErrorMessage(kind, hint)
        self.mount(view)
        return view

    def message_views(self) -> list[MessageView]:
        return [v for v in self.query(MessageView) if v.message_index is not None]

    def mark_dropped(self, dropped: set[int]) -> None:
        for view in self.message_views():
            view.set_dropped(view.message_index in dropped)

    def last_assistant(self) -> AssistantMessage | None:
        replies = list(self.query(AssistantMessage))
        return replies[-1] if replies else None

    async def clear_chat(self) -> None:
        self.anchor(False)
        await self.remove_children()
        self.show_welcome()
