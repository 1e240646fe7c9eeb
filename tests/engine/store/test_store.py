"""The SQLite history: round trips, immediate durability, schema versioning, named errors."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from tui.engine.metrics.record import DroppedMessage, RequestRecord, RequestStatus, TtftLevel
from tui.engine.store.database import SCHEMA_VERSION, Store, StoreError, record_from_dict
from tui.locations import history_db_path


def _record(**changes: object) -> RequestRecord:
    record = RequestRecord(model="m", endpoint_host="127.0.0.1:1", streamed=True, simulated=True)
    record.ttft_ms = 212.0
    record.total_ms = 2310.0
    record.status = RequestStatus.STALLED
    record.ttft_level = TtftLevel.OK
    record.dropped = [DroppedMessage(3, "history: middle")]
    for name, value in changes.items():
        setattr(record, name, value)
    return record


def test_default_path_is_under_firsttoken_home(isolated_home: Path) -> None:
    with Store() as store:
        assert store.path == history_db_path()
        assert str(store.path).startswith(str(isolated_home))
        assert store.path.exists()


def test_chats_and_messages_round_trip(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    chat = store.new_chat("first", "qwen")
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "héllo 你好"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
    ]
    for message in messages:
        store.add_message(chat, message)
    assert store.messages(chat) == messages
    (listed,) = store.chats()
    assert listed["created_at_epoch"] <= listed["last_used_epoch"]
    assert listed | {"created_at_epoch": 0, "last_used_epoch": 0} == {
        "id": chat,
        "title": "first",
        "kind": "app",
        "model": "qwen",
        "endpoint_host": None,
        "created_at_epoch": 0,
        "last_used_epoch": 0,
        "message_count": 3,
    }
    store.close()


def test_record_keeps_every_field_and_the_raw_reply(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    chat = store.new_chat("c", "m")
    record = _record()
    raw = "hi \x1b[31mred\x1b[0m"
    store.save_record(record, raw, chat_id=chat)
    (row,) = store.records()
    assert row["reply_text"] == raw
    assert row["chat_id"] == chat
    assert row["status"] == "stalled"
    assert record_from_dict(row) == record
    assert store.records(chat_id=chat + 1) == []
    store.close()


def test_records_newest_first_and_limited(tmp_path: Path) -> None:
    with Store(tmp_path / "h.sqlite3") as store:
        for i in range(5):
            store.save_record(_record(started_at_epoch=1000.0 + i, model=f"m{i}"), "")
        assert [r["model"] for r in store.records(limit=3)] == ["m4", "m3", "m2"]


def test_writes_are_committed_immediately(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = Store(path)
    store.save_record(_record(), "kept")
    # A second connection (another process, or after a crash) sees it without close().
    with Store(path) as other:
        assert other.records()[0]["reply_text"] == "kept"
    store.close()


def test_schema_version_is_set_and_newer_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    Store(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer") as caught:
        Store(path)
    assert str(path) in str(caught.value)


def test_corrupt_file_is_one_line_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError) as caught:
        Store(path)
    message = str(caught.value)
    assert str(path) in message and "\n" not in message


def test_unwritable_location_is_one_line_naming_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    path = blocker / "sub" / "h.sqlite3"  # a folder under a regular file cannot exist
    with pytest.raises(StoreError) as caught:
        Store(path)
    assert str(path) in str(caught.value)


def test_concurrent_writers_in_threads(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    chat = store.new_chat("c", "m")

    def write(n: int) -> None:
        for i in range(20):
            store.add_message(chat, {"role": "user", "content": f"{n}-{i}"})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.messages(chat)) == 80
    store.close()


def test_sync_messages_rewrites_from_the_first_difference(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    chat = store.new_chat("retried", "m")
    for message in (
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "first answer"},
    ):
        store.add_message(chat, message)
    other = store.new_chat("other", "m")
    store.add_message(other, {"role": "user", "content": "untouched"})

    # A retry replaced the reply, and the user set a system prompt.
    now = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "second answer"},
    ]
    store.sync_messages(chat, now)
    assert store.messages(chat) == now
    store.sync_messages(chat, now[:2])  # shorter: the tail goes
    assert store.messages(chat) == now[:2]
    store.add_message(chat, {"role": "assistant", "content": "third"})  # appends still work
    assert store.messages(chat)[-1]["content"] == "third"
    assert store.messages(other) == [{"role": "user", "content": "untouched"}]
    # The retried chat was used last: it comes first.
    assert [c["message_count"] for c in store.chats()] == [3, 1]


# The version-1 schema as firsttoken created it, to check that old history files still open.
V1_RECORDS = """
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
PRAGMA user_version=1;
"""


def test_a_version_1_history_opens_migrated_with_its_records_readable(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(V1_RECORDS)
    old_record = {"id": "r1", "model": "m", "endpoint_host": "h:1", "streamed": True,
                  "started_at_epoch": 1.0, "status": "ok", "ttft_ms": 200.0}  # fmt: skip
    old.execute(
        "INSERT INTO records VALUES ('r1', NULL, 1.0, 'm', 'h:1', 'ok', NULL, 1, 0, 0, 200.0,"
        " NULL, NULL, NULL, NULL, ?, 'old reply')",
        (json.dumps(old_record),),
    )
    old.commit()
    old.close()
    with Store(path) as store:
        [data] = store.records()
        store.save_record(
            _record(phases_ms={"connect": 0.5, "first_token": 40.0}, connection_reused=False), "new"
        )
        newest = store.records()[0]
    rebuilt = record_from_dict(data)
    assert (rebuilt.ttft_ms, rebuilt.phases_ms, rebuilt.connection_reused) == (200.0, None, None)
    assert rebuilt.adjustments == [] and data["reply_text"] == "old reply"
    assert newest["phases_ms"] == {"connect": 0.5, "first_token": 40.0}
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
    rows = db.execute(
        "SELECT connection_reused, phases_json FROM records ORDER BY started_at_epoch"
    ).fetchall()
    db.close()
    assert rows == [(None, None), (0, '{"connect": 0.5, "first_token": 40.0}')]
