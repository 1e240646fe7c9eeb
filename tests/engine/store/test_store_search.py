"""Search over every chat's messages (SQLite FTS5, kept in step by triggers), renaming and
deleting chats, and a page of a long history: against real history files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tui.engine.metrics.record import RequestRecord
from tui.engine.store.database import ASK_CHAT, Store
from tui.engine.store.migrations import statements_for


def _chat(store: Store, title: str, *texts: str, kind: str = "app") -> int:
    chat_id = store.new_chat(title, "m", kind)
    for n, text in enumerate(texts):
        store.add_message(chat_id, {"role": "user" if n % 2 == 0 else "assistant", "content": text})
    return chat_id


def test_search_follows_every_change_to_the_messages(tmp_path: Path) -> None:
    with Store(tmp_path / "h.sqlite3") as store:
        walrus = _chat(store, "animals", "tell me about walruses", "Walruses are large.")
        other = _chat(store, "latency", "why is prefill slow?")
        assert store.search_chats("walrus") == [walrus]  # a prefix of what is typed
        assert store.search_chats("PREFILL slow") == [other]  # every word, any case
        assert store.search_chats("latency") == [other]  # a title
        assert store.search_chats("walrus prefill") == []
        store.sync_messages(walrus, [{"role": "user", "content": "about seals instead"}])
        assert store.search_chats("walrus") == [] and store.search_chats("seals") == [walrus]
        store.add_message(other, {"role": "user", "content": "and the walrus?"})
        assert store.search_chats("walrus") == [other]
        assert store.delete_chat(other)
        assert store.search_chats("walrus") == [] and store.search_chats("prefill") == []
        assert store.search_chats('"; DROP TABLE chats; --') == []  # no FTS syntax gets in
        assert store.search_chats("   ") == []


def test_search_orders_by_last_use_and_keeps_to_a_kind(tmp_path: Path) -> None:
    with Store(tmp_path / "h.sqlite3") as store:
        old = _chat(store, "one", "the cache question")
        run = _chat(store, "two", "the cache question again", kind=ASK_CHAT)
        new = _chat(store, "three", "cache cache")
        store.add_message(old, {"role": "user", "content": "later"})  # used last
        assert store.search_chats("cache") == [old, new, run]
        assert store.search_chats("cache", kind="app") == [old, new]
        # A limit keeps the chats with the newest matching messages.
        assert store.search_chats("cache", limit=1) == [new]


def test_a_deleted_chat_keeps_its_records_and_a_renamed_one_its_messages(tmp_path: Path) -> None:
    with Store(tmp_path / "h.sqlite3") as store:
        chat = _chat(store, "to go", "hello")
        store.save_record(RequestRecord(model="m", endpoint_host="h", streamed=True), "hi", chat)
        assert store.rename_chat(chat, "a name of mine")
        assert store.chats()[0]["title"] == "a name of mine"
        assert store.messages(chat) == [{"role": "user", "content": "hello"}]
        assert store.delete_chat(chat) and not store.delete_chat(chat)
        assert not store.rename_chat(chat, "gone")
        assert store.chats() == [] and store.messages(chat) == []
        (record,) = store.records()
        assert record["chat_id"] is None and record["reply_text"] == "hi"  # the latency kept


def test_a_page_of_chats_and_their_counts(tmp_path: Path) -> None:
    with Store(tmp_path / "h.sqlite3") as store:
        ids = [_chat(store, f"chat {n}", "a", "b") for n in range(7)]
        _chat(store, "a run", "q", kind=ASK_CHAT)
        page = store.chats(kinds=("app",), offset=2, limit=3)
        assert [c["id"] for c in page] == list(reversed(ids))[2:5]
        assert all(c["message_count"] == 2 for c in page)
        assert store.chat_counts() == {"app": 7, "ask": 1}
        assert [c["id"] for c in store.chats(ids=[ids[0], ids[3]])] == [ids[3], ids[0]]


def test_a_version_5_history_is_indexed_as_it_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    db = sqlite3.connect(path)
    for version in range(1, 6):
        for statement in statements_for(version):
            db.execute(statement)
    db.execute("PRAGMA user_version=5")
    db.execute(
        "INSERT INTO chats (id, title, model, created_at_epoch, kind, last_used_epoch)"
        " VALUES (1, 'old chat', 'm', 1.0, 'app', 1.0)"
    )
    db.execute(
        "INSERT INTO messages (chat_id, lane, position, role, json)"
        """ VALUES (1, 0, 0, 'user', '{"role": "user", "content": "an old narwhal question"}')"""
    )
    db.commit()
    db.close()
    with Store(path) as store:
        assert store.search_chats("narwhal") == [1]  # indexed while migrating
        assert store.messages(1)[0]["content"] == "an old narwhal question"  # nothing lost
