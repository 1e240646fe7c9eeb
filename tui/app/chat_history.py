"""The app's side of the history file: what is saved when, and the saved chats to reopen.

The chat is created at its first send, with every message so far (a loaded conversation
too); each later message is appended; a change to the chat's past (a retried reply, a new
system prompt) rewrites the stored messages to match. A reply is filed under the chat it
was sent from, even when the screen has moved on. A failing history file is one warning,
never a lost reply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.app.chat_session import ChatSession
    from tui.engine.metrics import RequestRecord
    from tui.engine.store import Store


@dataclass(frozen=True)
class SavedChat:
    messages: list[dict[str, Any]]
    records: list[RequestRecord]  # oldest first
    replies: list[str]  # each record's reply text

    def reply_records(self) -> dict[int, RequestRecord]:
        """The record each assistant message came from, by message index: matched by its
        text, in order. A retried reply's record matches nothing (it stays in the history)."""
        matched: dict[int, RequestRecord] = {}
        pending = list(zip(self.records, self.replies, strict=True))
        for index, message in enumerate(self.messages):
            if message.get("role") != "assistant":
                continue
            for position, (record, reply) in enumerate(pending):
                if reply and reply == message.get("content"):
                    matched[index] = record
                    del pending[: position + 1]  # later messages come from later records
                    break
        return matched


class ChatHistory:
    def __init__(
        self, store: Store | None, session: ChatSession, warn: Callable[[str], None]
    ) -> None:
        self.store = store
        self.session = session
        self._warn = warn

    def message_sent(self, message: dict[str, Any]) -> None:
        """`message` was just added to the session and is about to be sent."""
        if self.store is None:
            return
        try:
            if self.session.chat_id is None:
                self._create_chat()  # with every message so far, this one included
            else:
                self.store.add_message(self.session.chat_id, message)
        except Exception as error:  # history is not worth losing the reply over
            self._warn(f"history not saved: {error}")

    def past_changed(self, create: bool = False) -> None:
        """The stored chat follows a change to its past; with `create`, a conversation not
        saved yet (loaded, then sent as it stands) becomes a chat."""
        if self.store is None or (self.session.chat_id is None and not create):
            return
        try:
            if self.session.chat_id is None:
                self._create_chat()
            else:
                self.store.sync_messages(self.session.chat_id, self.session.messages)
        except Exception as error:
            self._warn(f"history not saved: {error}")

    def reply_done(
        self, chat_id: int | None, record: RequestRecord, text: str, reasoning: str = ""
    ) -> None:
        """A request ended: its record, and what arrived as the chat's reply (with the
        model's thinking, when it sent any)."""
        from tui.engine.reasoning import assistant_message

        if self.store is None:
            return
        try:
            if text and chat_id is not None:
                self.store.add_message(chat_id, assistant_message(text, reasoning))
            self.store.save_record(record, text, chat_id=chat_id, reasoning_text=reasoning)
        except Exception as error:
            self._warn(f"history not saved: {error}")

    def chats(self) -> list[dict[str, Any]] | None:
        """The saved chats, newest first; None (after a warning) when there is no history."""
        if self.store is None:
            self._warn("history is not being saved, so there is no chat to open")
            return None
        try:
            return self.store.chats()
        except Exception as error:
            self._warn(f"history not readable: {error}")
            return None

    def chat(self, chat_id: int) -> SavedChat | None:
        """A saved chat: its messages and every record of it."""
        from tui.engine.store import record_from_dict

        if self.store is None:
            return None
        try:
            messages = self.store.messages(chat_id)
            stored = list(reversed(self.store.records(limit=-1, chat_id=chat_id)))
        except Exception as error:
            self._warn(f"history not readable: {error}")
            return None
        return SavedChat(
            messages,
            [record_from_dict(data) for data in stored],
            [str(data.get("reply_text") or "") for data in stored],
        )

    def _create_chat(self) -> None:
        assert self.store is not None
        title = next(
            (
                str(message.get("content") or "")[:60]
                for message in reversed(self.session.messages)
                if message.get("role") == "user"
            ),
            "",
        )
        self.session.chat_id = self.store.new_chat(title or "chat", self.session.model)
        self.store.sync_messages(self.session.chat_id, self.session.messages)
