"""A chat picker's source held in memory (the picker's own tests; the app's reads the store)."""

from __future__ import annotations

from typing import Any


class ListedChats:
    """Chats as Store.chats() lists them, searched by title and model."""

    def __init__(self, chats: list[dict[str, Any]]) -> None:
        self.chats = [dict(chat) for chat in chats]

    def _of(self, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
        return [chat for chat in self.chats if chat.get("kind", "app") in kinds]

    def page(self, kinds: tuple[str, ...], offset: int, limit: int) -> list[dict[str, Any]]:
        return self._of(kinds)[offset : offset + limit]

    def search(self, text: str, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
        words = text.lower().split()
        return [
            chat
            for chat in self._of(kinds)
            if all(word in f"{chat['title']} {chat['model']}".lower() for word in words)
        ]

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for chat in self.chats:
            counts[chat.get("kind", "app")] = counts.get(chat.get("kind", "app"), 0) + 1
        return counts

    def rename(self, chat_id: int, title: str) -> bool:
        for chat in self.chats:
            if chat["id"] == chat_id:
                chat["title"] = title
                return True
        return False

    def delete(self, chat_id: int) -> bool:
        before = len(self.chats)
        self.chats = [chat for chat in self.chats if chat["id"] != chat_id]
        return len(self.chats) < before


def stored_chats(store: Any) -> Any:
    """The app's own source over a real history file (searched with its full-text index)."""
    from tui.app.screens.saved_chats import SavedChats
    from tui.config import Config
    from tui.session.chat_state import ChatState
    from tui.session.history import ChatHistory

    return SavedChats(ChatHistory(store, ChatState.from_config(Config()), warn=print))
