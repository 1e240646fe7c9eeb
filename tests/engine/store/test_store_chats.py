"""The history's chat list: who made each chat, when it was last used, what it went on with;
a version-3 file migrated without losing a row; files that are not a history refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tui.engine.metrics.record import RequestRecord
from tui.engine.store.database import ASK_CHAT, SCHEMA_VERSION, Store, StoreError

# A version-3 history as firsttoken 0.x wrote it: version 1's tables plus the columns
# versions 2 and 3 added (the statements those releases ran).
V3_SCHEMA = """
CREATE TABLE chats (id INTEGER PRIMARY KEY, title TEXT NOT NULL, model TEXT NOT NULL,
    created_at_epoch REAL NOT NULL);
CREATE TABLE messages (id INTEGER PRIMARY KEY,
    chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE, position INTEGER NOT NULL,
    role TEXT NOT NULL, json TEXT NOT NULL, UNIQUE (chat_id, position));
CREATE TABLE records (id TEXT PRIMARY KEY,
    chat_id INTEGER REFERENCES chats(id) ON DELETE SET NULL, started_at_epoch REAL NOT NULL,
    model TEXT NOT NULL, endpoint_host TEXT NOT NULL, status TEXT NOT NULL, error_kind TEXT,
    streamed INTEGER NOT NULL, simulated INTEGER NOT NULL, trim_enabled INTEGER NOT NULL,
    ttft_ms REAL, total_ms REAL, tpot_ms REAL, output_tokens INTEGER,
    prompt_tokens_estimated INTEGER, record_json TEXT NOT NULL, reply_text TEXT NOT NULL);
CREATE INDEX records_by_time ON records (started_at_epoch);
CREATE INDEX records_by_chat ON records (chat_id, started_at_epoch);
ALTER TABLE records ADD COLUMN incomplete INTEGER NOT NULL DEFAULT 0;
ALTER TABLE records ADD COLUMN connection_reused INTEGER;
ALTER TABLE records ADD COLUMN phases_json TEXT;
PRAGMA user_version=3;
"""


def _v3_history(path: Path) -> None:
    """Chat 1 started first and was used last (a record at 5000), with a later model; chat 2
    started later and was last used at 3000; chat 3 never got a record."""
    db = sqlite3.connect(path)
    db.executescript(V3_SCHEMA)
    db.executemany(
        "INSERT INTO chats VALUES (?, ?, ?, ?)",
        [
            (1, "old chat", "first-model", 1000.0),
            (2, "newer chat", "m2", 2000.0),
            (3, "no reply yet", "m3", 2500.0),
        ],
    )
    for chat_id, position, content in ((1, 0, "q1"), (1, 1, "a1"), (2, 0, "q2"), (3, 0, "q3")):
        role = "user" if content.startswith("q") else "assistant"
        db.execute(
            "INSERT INTO messages (chat_id, position, role, json) VALUES (?, ?, ?, ?)",
            (chat_id, position, role, json.dumps({"role": role, "content": content})),
        )
    for record_id, chat_id, started, model, host in (
        ("r1", 1, 1001.0, "first-model", "a.example:443"),
        ("r2", 2, 3000.0, "m2", "b.example:443"),
        ("r3", 1, 5000.0, "later-model", "c.example:8080"),
    ):
        data = {"id": record_id, "model": model, "endpoint_host": host, "streamed": True,
                "started_at_epoch": started, "status": "ok", "ttft_ms": 100.0}  # fmt: skip
        db.execute(
            "INSERT INTO records (id, chat_id, started_at_epoch, model, endpoint_host, status,"
            " streamed, simulated, trim_enabled, record_json, reply_text)"
            " VALUES (?, ?, ?, ?, ?, 'ok', 1, 0, 1, ?, ?)",
            (record_id, chat_id, started, model, host, json.dumps(data), f"reply {record_id}"),
        )
    db.commit()
    db.close()


def _dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    db = sqlite3.connect(path)
    try:
        return {
            "chats": db.execute(
                "SELECT id, title, model, created_at_epoch FROM chats ORDER BY id"
            ).fetchall(),
            "messages": db.execute(
                "SELECT id, chat_id, position, role, json FROM messages ORDER BY id"
            ).fetchall(),
            "records": db.execute(
                "SELECT id, chat_id, record_json, reply_text FROM records ORDER BY id"
            ).fetchall(),
        }
    finally:
        db.close()


def test_a_version_3_history_is_migrated_in_place_losing_nothing(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    _v3_history(path)
    before = _dump(path)
    with Store(path, read_only=True) as reader:  # read-only: listed the same, not migrated
        unmigrated = reader.chats()
    with Store(path) as store:
        chats = store.chats()
    assert _dump(path) == before  # every row as it was
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
    db.close()
    assert chats == unmigrated
    # The last used first: chat 1's latest record (5000) is newer than anything of chat 2's.
    used = [(c["id"], c["last_used_epoch"]) for c in chats]
    assert used == [(1, 5000.0), (2, 3000.0), (3, 2500.0)]
    assert [c["kind"] for c in chats] == ["app", "app", "app"]
    # What each chat went on with: its latest record's model and endpoint.
    assert [(c["model"], c["endpoint_host"]) for c in chats] == [
        ("later-model", "c.example:8080"),
        ("m2", "b.example:443"),
        ("m3", None),
    ]
    assert [c["message_count"] for c in chats] == [2, 1, 1]


def test_the_last_used_chat_comes_first_not_the_newest(tmp_path: Path) -> None:
    """Chat in A, start B, go back to A and send more: A is the one to resume."""
    with Store(tmp_path / "h.sqlite3") as store:
        a = store.new_chat("a", "m")
        store.add_message(a, {"role": "user", "content": "in a"})
        b = store.new_chat("b", "m")
        store.add_message(b, {"role": "user", "content": "in b"})
        assert [chat["id"] for chat in store.chats()] == [b, a]
        store.add_message(a, {"role": "user", "content": "back in a"})
        assert [chat["id"] for chat in store.chats()] == [a, b]
        store.save_record(_record("m"), "reply", chat_id=b)  # a record counts as use too
        assert [chat["id"] for chat in store.chats()] == [b, a]
        store.sync_messages(a, [{"role": "system", "content": "new system prompt"}])
        assert [chat["id"] for chat in store.chats()] == [a, b]
        store.sync_messages(b, store.messages(b))  # nothing changed: not a use
        assert [chat["id"] for chat in store.chats()] == [a, b]


def _record(model: str, host: str = "h:1") -> RequestRecord:
    return RequestRecord(model=model, endpoint_host=host, streamed=True)


def test_a_chat_shows_the_model_it_went_on_with(tmp_path: Path) -> None:
    with Store(tmp_path / "h.sqlite3") as store:
        chat = store.new_chat("t", "first-model")
        store.save_record(_record("first-model", "one:1"), "r1", chat_id=chat)
        store.save_record(_record("switched-model", "two:2"), "r2", chat_id=chat)
        (listed,) = store.chats()
    assert (listed["model"], listed["endpoint_host"]) == ("switched-model", "two:2")


def test_chats_by_kind_and_limited(tmp_path: Path) -> None:
    with Store(tmp_path / "h.sqlite3") as store:
        app = store.new_chat("in the app", "m")
        asks = [store.new_chat(f"ask {n}", "m", kind=ASK_CHAT) for n in range(3)]
        assert [c["id"] for c in store.chats(kind="app")] == [app]
        assert [c["id"] for c in store.chats(kind=ASK_CHAT)] == asks[::-1]
        assert [c["id"] for c in store.chats(limit=2)] == asks[:0:-1]
        assert {c["kind"] for c in store.chats()} == {"app", "ask"}
        with pytest.raises(ValueError):
            store.new_chat("t", "m", kind="bench")


def test_a_folder_where_the_history_goes_is_one_line_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    path.mkdir()
    for read_only in (False, True):
        with pytest.raises(StoreError) as caught:
            Store(path, read_only=read_only)
        message = str(caught.value)
        assert str(path) in message and "is a folder" in message and "\n" not in message
        assert "FIRSTTOKEN_HOME" in message and "disk I/O" not in message


def test_another_programs_database_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    other = sqlite3.connect(path)
    other.executescript(
        "CREATE TABLE chats (room TEXT, line TEXT); INSERT INTO chats VALUES ('x', 'hi');"
        "CREATE TABLE users (name TEXT);"
    )
    other.commit()
    other.close()
    before = path.read_bytes()
    for read_only in (False, True):
        with pytest.raises(StoreError) as caught:
            Store(path, read_only=read_only)
        message = str(caught.value)
        assert str(path) in message and "not a firsttoken history" in message
        assert "chats, users" in message and "already exists" not in message
        assert "move it aside" in message and "\n" not in message
    assert path.read_bytes() == before
