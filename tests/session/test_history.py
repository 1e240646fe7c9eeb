"""ChatHistory: when the app saves what, and a failing history file is a warning only."""

from __future__ import annotations

from pathlib import Path

from tui.config import ConfigFlags, load_config
from tui.engine.metrics.record import RequestRecord
from tui.engine.store.database import Store
from tui.session.chat_state import ChatState
from tui.session.history import ChatHistory, SavedChat


def _session() -> ChatState:
    return ChatState.from_config(load_config(ConfigFlags(), env={}))


def test_the_chat_is_created_at_the_first_send_with_what_came_before(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    session = _session()
    history = ChatHistory(store, session, warn=lambda message: None)
    session.set_system_prompt("be brief")
    session.add_user("first question")
    history.message_sent(session.messages[-1])
    assert session.chat_id is not None
    assert store.messages(session.chat_id) == session.messages
    assert store.chats()[0]["title"] == "first question"
    session.add_user("second")
    history.message_sent(session.messages[-1])
    assert store.messages(session.chat_id) == session.messages
    store.close()


def test_a_failing_history_file_warns_and_raises_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    store.close()  # every call now fails, as a file gone bad would
    warnings: list[str] = []
    session = _session()
    history = ChatHistory(store, session, warn=warnings.append)
    session.add_user("hello")
    history.message_sent(session.messages[-1])
    history.reply_done(None, RequestRecord(model="m", endpoint_host="h", streamed=True), "hi")
    assert history.chats() is None
    assert history.chat(1) is None
    assert len(warnings) == 4
    assert all(w.startswith(("history not saved", "history not readable")) for w in warnings)
    assert session.messages[-1]["content"] == "hello"  # the conversation itself is intact


def test_without_a_history_file_nothing_is_saved_and_opening_says_why() -> None:
    warnings: list[str] = []
    session = _session()
    history = ChatHistory(None, session, warn=warnings.append)
    session.add_user("hello")
    history.message_sent(session.messages[-1])
    assert session.chat_id is None and warnings == []
    assert history.chats() is None
    assert warnings == ["history is not being saved, so there is no chat to open"]


def test_a_reopened_chats_replies_find_their_records_by_text_in_order() -> None:
    def record(model: str) -> RequestRecord:
        return RequestRecord(model=model, endpoint_host="h", streamed=True)

    first, replaced, retried, failed, same_text = (record(m) for m in "abcde")
    saved = SavedChat(
        messages=[
            {"role": "user", "content": "q1"},
            {"role": "assistant", "content": "one"},
            {"role": "user", "content": "q2"},
            {"role": "assistant", "content": "two, again"},
            {"role": "user", "content": "q3"},
            {"role": "assistant", "content": "one"},  # the same words as the first reply
        ],
        records=[first, replaced, retried, failed, same_text],
        replies=["one", "two", "two, again", "", "one"],
    )
    assert saved.reply_records() == {1: first, 3: retried, 5: same_text}
