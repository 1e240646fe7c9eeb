"""SQLite history: chats, their messages, and one record per request with its reply text.

Stdlib sqlite3 in WAL mode with synchronous=NORMAL: every write is committed at once (a crash
loses nothing already returned), and readers never block the writer. One connection shared by
the app's threads behind a lock (check_same_thread=False). The schema version lives in
`PRAGMA user_version`; a newer file than this code knows is refused rather than damaged.
A corrupt or unwritable file becomes a one-line StoreError naming the path.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tui.engine.metrics import DroppedMessage, RequestRecord, RequestStatus, TtftLevel

SCHEMA_VERSION = 2

_SCHEMA_V1 = """
CREATE TABLE chats (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    model TEXT NOT NULL,
    created_at_epoch REAL NOT NULL
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    role TEXT NOT NULL,
    json TEXT NOT NULL,
    UNIQUE (chat_id, position)
);
CREATE TABLE records (
    id TEXT PRIMARY KEY,
    chat_id INTEGER REFERENCES chats(id) ON DELETE SET NULL,
    started_at_epoch REAL NOT NULL,
    model TEXT NOT NULL,
    endpoint_host TEXT NOT NULL,
    status TEXT NOT NULL,
    error_kind TEXT,
    streamed INTEGER NOT NULL,
    simulated INTEGER NOT NULL,
    trim_enabled INTEGER NOT NULL,
    ttft_ms REAL,
    total_ms REAL,
    tpot_ms REAL,
    output_tokens INTEGER,
    prompt_tokens_estimated INTEGER,
    record_json TEXT NOT NULL,  -- RequestRecord.to_dict(): every field, the source of truth
    reply_text TEXT NOT NULL
);
CREATE INDEX records_by_time ON records (started_at_epoch);
CREATE INDEX records_by_chat ON records (chat_id, started_at_epoch);
"""

# Version 2: where TTFT went (RequestRecord.phases_ms as a JSON object in phase order, and
# connection_reused) in columns of their own, for queries; record_json has them too. Records
# stored before have NULL there. (No comments inside: SQLite keeps an added column's text in
# the table's CREATE statement.)
_MIGRATE_TO_V2 = """
ALTER TABLE records ADD COLUMN connection_reused INTEGER;
ALTER TABLE records ADD COLUMN phases_json TEXT
"""

# Each step takes a database from the version before it to its own.
_MIGRATIONS = {2: _MIGRATE_TO_V2}


class StoreError(Exception):
    """One line naming the database file and what to do."""


def record_from_dict(data: dict[str, Any]) -> RequestRecord:
    """Rebuild a RequestRecord from `to_dict()` output (what `records()` returns)."""
    known = set(RequestRecord.__dataclass_fields__)
    values = {k: v for k, v in data.items() if k in known}
    values["status"] = RequestStatus(values.get("status", "ok"))
    level = values.get("ttft_level")
    values["ttft_level"] = TtftLevel(level) if level else None
    values["dropped"] = [DroppedMessage(**d) for d in values.get("dropped") or []]
    return RequestRecord(**values)


class Store:
    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from tui.locations import history_db_path

            path = history_db_path()
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=5.0
            )
        except (OSError, sqlite3.Error) as error:
            raise self._error(error) from None
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.Error as error:
            self._db.close()
            raise self._error(error) from None

    def _error(self, error: BaseException) -> StoreError:
        reason = str(error) or type(error).__name__
        if isinstance(error, sqlite3.DatabaseError) and "not a database" in reason:
            hint = "move it aside to start a fresh history"
        elif "readonly" in reason or "unable to open" in reason or isinstance(error, OSError):
            hint = "check the folder exists and is writable, or set FIRSTTOKEN_HOME"
        else:
            hint = "move it aside to start a fresh history"
        return StoreError(f"history database {self.path}: {reason}: {hint}")

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"history database {self.path}: schema version {version} is newer than this "
                f"firsttoken understands ({SCHEMA_VERSION}): upgrade firsttoken"
            )
        if version == SCHEMA_VERSION:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            # Read again under the write lock: another process may have migrated meanwhile.
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                self._run(_SCHEMA_V1)
                version = 1
            for step in range(version + 1, SCHEMA_VERSION + 1):
                self._run(_MIGRATIONS[step])
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def _run(self, script: str) -> None:
        # executescript would COMMIT our transaction first; run the statements one by one.
        for statement in script.split(";"):
            if statement.strip():
                self._db.execute(statement)

    @contextmanager
    def _locked(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as error:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise self._error(error) from None

    # -- writes (each committed before returning) ----------------------------------------------

    def new_chat(self, title: str, model: str) -> int:
        with self._locked() as db:
            cursor = db.execute(
                "INSERT INTO chats (title, model, created_at_epoch) VALUES (?, ?, ?)",
                (title, model, time.time()),
            )
            return int(cursor.lastrowid or 0)

    def add_message(self, chat_id: int, message: dict[str, Any]) -> int:
        """Append a message (any OpenAI chat message dict) to a chat; returns its row id."""
        with self._locked() as db:
            db.execute("BEGIN IMMEDIATE")
            (position,) = db.execute(
                "SELECT COALESCE(MAX(position) + 1, 0) FROM messages WHERE chat_id = ?",
                (chat_id,),
            ).fetchone()
            cursor = db.execute(
                "INSERT INTO messages (chat_id, position, role, json) VALUES (?, ?, ?, ?)",
                (chat_id, position, str(message.get("role", "")), json.dumps(message)),
            )
            db.execute("COMMIT")
            return int(cursor.lastrowid or 0)

    def sync_messages(self, chat_id: int, messages: list[dict[str, Any]]) -> None:
        """Make the chat's stored messages exactly `messages` (a retried reply, a changed
        system prompt): rows up to the first difference stay, the rest are rewritten. The
        replies a retry replaced are not lost: every request's record keeps its reply text."""
        encoded = [json.dumps(message) for message in messages]
        with self._locked() as db:
            db.execute("BEGIN IMMEDIATE")
            stored = db.execute(
                "SELECT position, json FROM messages WHERE chat_id = ? ORDER BY position",
                (chat_id,),
            ).fetchall()
            same = 0
            while same < min(len(stored), len(encoded)) and stored[same][1] == encoded[same]:
                same += 1
            if same < len(stored):
                db.execute(
                    "DELETE FROM messages WHERE chat_id = ? AND position >= ?",
                    (chat_id, stored[same][0]),
                )
            first = stored[same - 1][0] + 1 if same else 0
            db.executemany(
                "INSERT INTO messages (chat_id, position, role, json) VALUES (?, ?, ?, ?)",
                [
                    (chat_id, first + offset, str(message.get("role", "")), text)
                    for offset, (message, text) in enumerate(
                        zip(messages[same:], encoded[same:], strict=True)
                    )
                ],
            )
            db.execute("COMMIT")

    def save_record(
        self, record: RequestRecord, reply_text: str, chat_id: int | None = None
    ) -> None:
        data = record.to_dict()
        with self._locked() as db:
            db.execute(
                "INSERT OR REPLACE INTO records (id, chat_id, started_at_epoch, model,"
                " endpoint_host, status, error_kind, streamed, simulated, trim_enabled, ttft_ms,"
                " total_ms, tpot_ms, output_tokens, prompt_tokens_estimated, record_json,"
                " reply_text, connection_reused, phases_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    chat_id,
                    record.started_at_epoch,
                    record.model,
                    record.endpoint_host,
                    data["status"],
                    record.error_kind,
                    int(record.streamed),
                    int(record.simulated),
                    int(record.trim_enabled),
                    record.ttft_ms,
                    record.total_ms,
                    record.tpot_ms,
                    record.output_tokens,
                    record.prompt_tokens_estimated,
                    json.dumps(data),
                    reply_text,
                    None if record.connection_reused is None else int(record.connection_reused),
                    None if record.phases_ms is None else json.dumps(record.phases_ms),
                ),
            )

    # -- reads ---------------------------------------------------------------------------------

    def chats(self) -> list[dict[str, Any]]:
        """Newest first: id, title, model, created_at_epoch, message_count."""
        with self._locked() as db:
            rows = db.execute(
                "SELECT c.id, c.title, c.model, c.created_at_epoch,"
                " (SELECT COUNT(*) FROM messages m WHERE m.chat_id = c.id)"
                " FROM chats c ORDER BY c.created_at_epoch DESC, c.id DESC"
            ).fetchall()
        return [
            {
                "id": r[0],
                "title": r[1],
                "model": r[2],
                "created_at_epoch": r[3],
                "message_count": r[4],
            }
            for r in rows
        ]

    def messages(self, chat_id: int) -> list[dict[str, Any]]:
        with self._locked() as db:
            rows = db.execute(
                "SELECT json FROM messages WHERE chat_id = ? ORDER BY position", (chat_id,)
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def records(self, limit: int = 100, chat_id: int | None = None) -> list[dict[str, Any]]:
        """Newest first: each RequestRecord.to_dict() plus `reply_text` and `chat_id`
        (`limit` -1: all of them)."""
        query = "SELECT record_json, reply_text, chat_id FROM records"
        params: tuple[Any, ...] = ()
        if chat_id is not None:
            query += " WHERE chat_id = ?"
            params = (chat_id,)
        query += " ORDER BY started_at_epoch DESC, rowid DESC LIMIT ?"
        with self._locked() as db:
            rows = db.execute(query, (*params, limit)).fetchall()
        out = []
        for record_json, reply_text, row_chat_id in rows:
            data = json.loads(record_json)
            data["reply_text"] = reply_text
            data["chat_id"] = row_chat_id
            out.append(data)
        return out

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
