"""A chat's side of the history file: what is saved when, and the saved chats to reopen.

The chat is created at its first send, with every message so far (a loaded conversation
too); each later message is appended; a change to the chat's past (a retried reply, a new
system prompt) rewrites the stored messages to match. A reply is filed under the chat it
was sent from, even when the screen has moved on. A failing history file is one warning,
never a lost reply.

A reply is saved while it streams too (drafts.py), as an incomplete record; a chat whose
last reply was cut off by a kill is reopened with that partial reply, marked incomplete.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tui.engine.store.database import APP_CHAT
from tui.session.drafts import Draft, ReplyDrafts, draft_record

if TYPE_CHECKING:
    from tui.engine.metrics.record import RequestRecord
    from tui.engine.metrics.statistics import LatencyRow
    from tui.engine.store.database import Store
    from tui.session.chat_state import ChatState
    from tui.session.turn import Turn

TITLE_LENGTH = 60


def chat_title(messages: list[dict[str, Any]]) -> str:
    """The latest user message's first line, shortened: what the chat lists show."""
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str) and content.strip():
            line = content.strip().splitlines()[0]
            return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"
    return "chat"


@dataclass(frozen=True)
class SavedChat:
    messages: list[dict[str, Any]]
    records: list[RequestRecord]  # oldest first
    replies: list[str]  # each record's reply text
    incomplete: frozenset[str] = field(default_factory=frozenset)  # ids of cut-off replies

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
        self,
        store: Store | None,
        state: ChatState,
        warn: Callable[[str], None],
        unsaved: Callable[[str], None] | None = None,
        kind: str = APP_CHAT,
        lane: int = 0,
    ) -> None:
        self.store = store
        self.state = state
        self.kind = kind  # what the chats it creates are: the app's, or an `ask` run's
        self.lane = lane  # a race's lane: this target's conversation within the race's chat
        self._warn = warn
        # A save that failed: said persistently by the surface (the app: a bar above the chat).
        self._unsaved = unsaved or warn
        self._loop: asyncio.AbstractEventLoop | None = None
        self.drafts = ReplyDrafts(store, self._warn_from_thread) if store is not None else None

    def _warn_from_thread(self, message: str) -> None:
        """The saver thread's warnings, shown by the UI's loop."""
        loop = self._loop
        if loop is None or loop.is_closed():  # a headless run whose loop has ended
            self._unsaved(message)
        else:
            loop.call_soon_threadsafe(self._unsaved, message)

    def message_sent(self, message: dict[str, Any]) -> None:
        """`message` was just added to the ChatState and is about to be sent."""
        if self.store is None:
            return
        try:
            if self.state.chat_id is None:
                self._create_chat()  # with every message so far, this one included
            else:
                self.store.add_message(self.state.chat_id, message, self.lane)
        except Exception as error:  # history is not worth losing the reply over
            self._unsaved(f"history not saved: {error}")

    def past_changed(self, create: bool = False) -> None:
        """The stored chat follows a change to its past; with `create`, a conversation not
        saved yet (loaded, then sent as it stands) becomes a chat."""
        if self.store is None or (self.state.chat_id is None and not create):
            return
        try:
            if self.state.chat_id is None:
                self._create_chat()
            else:
                self.store.sync_messages(self.state.chat_id, self.state.messages, self.lane)
        except Exception as error:
            self._unsaved(f"history not saved: {error}")

    def open_race(self, labels: list[str]) -> int | None:
        """A race's one chat, its lanes named by `labels` (None: no history, or it failed)."""
        if self.store is None:
            return None
        from tui.engine.store.database import RACE_CHAT

        title = "race: " + " vs ".join(labels)
        if len(title) > TITLE_LENGTH:
            title = title[: TITLE_LENGTH - 1] + "…"
        try:
            chat_id = self.store.new_chat(title, self.state.model, RACE_CHAT)
            self.store.name_lanes(chat_id, labels)
        except Exception as error:
            self._unsaved(f"history not saved: {error}")
            return None
        return chat_id

    def join_race(self, chat_id: int, lane: int) -> None:
        """This chat is lane `lane` of a race's chat: its messages so far are saved there."""
        self.lane = lane
        self.state.chat_id = chat_id
        self.past_changed()

    def reply_started(self, turn: Turn) -> Draft | None:
        """A request was just handed to the engine: its reply is saved as it streams."""
        if self.drafts is None:
            return None
        self._loop = asyncio.get_running_loop()
        client = turn.client
        return self.drafts.begin(
            Draft(
                chat_id=turn.chat_id,
                record=draft_record(turn.request, client.host, client.simulated),
                intake=turn.intake,
                state=turn.state,
            )
        )

    def reply_done(
        self,
        chat_id: int | None,
        record: RequestRecord,
        text: str,
        *,
        reasoning: str = "",
        draft: Draft | None = None,
    ) -> None:
        """A request ended: its record (replacing its draft), and what arrived as the chat's
        reply (with the model's thinking, when it sent any)."""
        from tui.engine.chat.reasoning import assistant_message

        store = self.store
        if store is None:
            return

        def final() -> None:
            if text and chat_id is not None:
                store.add_message(chat_id, assistant_message(text, reasoning), self.lane)
            store.save_record(
                record,
                text,
                chat_id=chat_id,
                replaces=draft.record.id if draft is not None else None,
                reasoning_text=reasoning or (draft.reasoning() if draft is not None else ""),
            )

        try:
            if self.drafts is not None:
                self.drafts.finish(draft, final)
            else:
                final()
        except Exception as error:
            self._unsaved(f"history not saved: {error}")

    def save_drafts_soon(self) -> None:
        """Save the replies under way now (signal-safe: the saver thread does it)."""
        if self.drafts is not None:
            self.drafts.save_soon()

    def close(self) -> None:
        """The app is closing: what is still a draft is saved once more, as it stands."""
        if self.drafts is not None:
            self.drafts.close()

    def chats(
        self, kinds: tuple[str, ...] | None = None, offset: int = 0, limit: int = -1
    ) -> list[dict[str, Any]] | None:
        """A page of the saved chats (of `kinds` only, when given), the last used first; None
        (after a warning) when there is no history or it cannot be read."""
        if self.store is None:
            self._warn("history is not being saved, so there is no chat to open")
            return None
        try:
            return self.store.chats(kinds=kinds, offset=offset, limit=limit)
        except Exception as error:
            self._warn(f"history not readable: {error}")
            return None

    def counts(self) -> dict[str, int]:
        """How many chats of each kind are kept ({} when none can be read)."""
        if self.store is None:
            return {}
        try:
            return self.store.chat_counts()
        except Exception:  # the list that follows says what is wrong
            return {}

    def search(self, text: str, kinds: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        """The chats whose title, model or messages hold every word of `text`, the last used
        first ([] after a warning when the history cannot be read)."""
        if self.store is None:
            return []
        try:
            found: list[int] = []
            for kind in kinds or (None,):
                found += self.store.search_chats(text, kind)
            return self.store.chats(ids=found) if found else []
        except Exception as error:
            self._warn(f"history not readable: {error}")
            return []

    def rename(self, chat_id: int, title: str) -> bool:
        """A chat's title, the user's own; False (after a warning) when it could not be."""
        if self.store is None:
            return False
        try:
            return self.store.rename_chat(chat_id, title)
        except Exception as error:
            self._unsaved(f"history not saved: {error}")
            return False

    def delete(self, chat_id: int) -> bool:
        """A chat and its messages gone (its records stay); False when it could not be. The
        chat on screen, deleted, goes on as a conversation not saved yet."""
        if self.store is None:
            return False
        try:
            deleted = self.store.delete_chat(chat_id)
        except Exception as error:
            self._unsaved(f"history not saved: {error}")
            return False
        if deleted and self.state.chat_id == chat_id:
            self.state.chat_id = None
        return deleted

    def latency_rows(self) -> list[LatencyRow] | None:
        """Every finished request's figures, oldest first (statistics read them); None (after a
        warning) when there is no history or it cannot be read."""
        if self.store is None:
            self._warn("history is not being saved, so there are no statistics")
            return None
        try:
            return self.store.latency_rows()
        except Exception as error:
            self._warn(f"history not readable: {error}")
            return None

    def export(self, chat_id: int, form: str) -> tuple[str, str] | None:
        """A saved chat as a document (tui/session/export.py) and the file name it suggests;
        None after a warning."""
        from tui.session.export import export_text, file_name, read_chat

        if self.store is None:
            return None
        try:
            document = read_chat(self.store, chat_id)
        except Exception as error:
            self._warn(f"history not readable: {error}")
            return None
        return export_text(document, form), file_name(document.chat, form)

    def chat(self, chat_id: int) -> SavedChat | None:
        """A saved chat: its messages and every record of it."""
        from tui.engine.store.database import record_from_dict

        if self.store is None:
            return None
        try:
            messages = self.store.messages(chat_id)
            stored = list(reversed(self.store.records(limit=-1, chat_id=chat_id)))
        except Exception as error:
            self._warn(f"history not readable: {error}")
            return None
        self._recover_cut_off_reply(chat_id, messages, stored)
        return SavedChat(
            messages,
            [record_from_dict(data) for data in stored],
            [str(data.get("reply_text") or "") for data in stored],
            frozenset(str(data["id"]) for data in stored if data.get("incomplete")),
        )

    def _recover_cut_off_reply(
        self, chat_id: int, messages: list[dict[str, Any]], stored: list[dict[str, Any]]
    ) -> None:
        """A reply cut off by a kill is in its draft record only (its message is added when a
        reply ends): it becomes the chat's reply, so the chat shows and sends it, and the
        stored messages match what is shown."""
        if not stored or not messages or messages[-1].get("role") != "user":
            return
        last = stored[-1]
        text = str(last.get("reply_text") or "")
        if not last.get("incomplete") or not text:
            return
        reply = {"role": "assistant", "content": text}
        messages.append(reply)
        assert self.store is not None
        try:
            self.store.add_message(chat_id, reply)
        except Exception as error:  # a read-only history still shows it
            self._unsaved(f"history not saved: {error}")

    def _create_chat(self) -> None:
        assert self.store is not None
        self.state.chat_id = self.store.new_chat(
            chat_title(self.state.messages), self.state.model, self.kind
        )
        self.store.sync_messages(self.state.chat_id, self.state.messages, self.lane)
