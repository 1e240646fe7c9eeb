"""The chat picker's view of the history: pages, searches, renames and deletes through the
session's history, every title and model shown inert (they are untrusted text)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui.app.untrusted import shown_chats

if TYPE_CHECKING:
    from tui.session.history import ChatHistory


class SavedChats:
    def __init__(self, history: ChatHistory) -> None:
        self.history = history

    def page(self, kinds: tuple[str, ...], offset: int, limit: int) -> list[dict[str, Any]]:
        return shown_chats(self.history.chats(kinds, offset, limit) or [])

    def search(self, text: str, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
        return shown_chats(self.history.search(text, kinds))

    def counts(self) -> dict[str, int]:
        return self.history.counts()

    def rename(self, chat_id: int, title: str) -> bool:
        return self.history.rename(chat_id, title)

    def delete(self, chat_id: int) -> bool:
        return self.history.delete(chat_id)
