"""SQLite history: chats, their messages, and one record per request with its reply text.

Stdlib sqlite3 in WAL mode with synchronous=NORMAL: every write is committed at once (a crash
loses nothing already returned), and readers never block the writer. One connection shared by
the app's threads behind a lock (check_same_thread=False). The schema version lives in
`PRAGMA user_version`; a newer file than this code knows is refused rather than damaged.
A corrupt, unwritable or full file, a folder in its place or another program's SQLite file
becomes a one-line StoreError naming the path and the fix (another program's file is never
changed).

Each chat has a kind (made by the app, or by a one-shot `ask`) and a last-used time, set when a
message or a record is added to it: every chat list puts the last used first.

A reply still streaming is saved as it grows with `incomplete=True` (the same record id each
time, replaced by the final save): a process killed mid-reply leaves what it had saved, marked
incomplete. The file and everything SQLite puts beside it (-wal, -shm, -journal) are created
readable by the owner only (0600, in a 0700 folder): replies and prompts are private. A
read-only Store (`read_only=True`) never writes, so `history` works on a read-only data dir.
"""

from __future__ import annotations

import errno
import json
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tui.engine.metrics.record import DroppedMessage, RequestRecord, RequestStatus, TtftLevel

# The kinds of chat: made in the app (its chat picker lists them), or by `ask` (one question).
APP_CHAT = "app"
ASK_CHAT = "ask"
CHAT_KINDS = (APP_CHAT, ASK_CHAT)

SCHEMA_VERSION = 4
# What each version adds to the one before (version 1 is _SCHEMA_V1). No comments inside the
# statements: SQLite keeps an added column's text in the table's CREATE statement.
_MIGRATIONS = {
    # A reply saved while it streamed, not yet finished (or cut off by a kill).
    2: ("ALTER TABLE records ADD COLUMN incomplete INTEGER NOT NULL DEFAULT 0",),
    # Where TTFT went (RequestRecord.phases_ms as a JSON object in phase order, and
    # connection_reused) in columns of their own for queries; record_json has them too.
    3: (
        "ALTER TABLE records ADD COLUMN connection_reused INTEGER",
        "ALTER TABLE records ADD COLUMN phases_json TEXT",
    ),
    # Who made a chat (the app, or a one-shot `ask`), and when it was last used: a message or
    # a record added. A chat from before is an app chat, last used at its latest record.
    4: (
        f"ALTER TABLE chats ADD COLUMN kind TEXT NOT NULL DEFAULT '{APP_CHAT}'",
        "ALTER TABLE chats ADD COLUMN last_used_epoch REAL NOT NULL DEFAULT 0",
        "UPDATE chats SET last_used_epoch = MAX(created_at_epoch, COALESCE("
        "(SELECT MAX(r.started_at_epoch) FROM records r WHERE r.chat_id = chats.id), 0))",
        "CREATE INDEX chats_by_last_use ON chats (last_used_epoch)",
    ),
}
_SIDE_FILES = ("-wal", "-shm", "-journal")

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


def _owner_only(path: Path) -> None:
    """Take group and other permissions off a file firsttoken made (an older release made the
    history 0644); a file it cannot change is left as it is."""
    try:
        mode = path.stat().st_mode
        if mode & 0o077:
            path.chmod(stat.S_IMODE(mode) & 0o700)
    except OSError:
        pass


class Store:
    def __init__(self, path: Path | None = None, *, read_only: bool = False) -> None:
        if path is None:
            from tui.locations import history_db_path

            path = history_db_path()
        self.path = Path(path)
        self.read_only = read_only
        self._lock = threading.Lock()
        if self.path.is_dir():
            raise StoreError(
                f"history database {self.path}: is a folder, not a file: move the folder "
                "aside, or set FIRSTTOKEN_HOME to keep the history elsewhere"
            )
        try:
            self._db = self._open_read_only() if read_only else self._open_private()
        except (OSError, sqlite3.Error) as error:
            raise self._error(error) from None
        try:
            self._check_ours()
            if read_only:
                self._check_version()
            else:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA foreign_keys=ON")
                self._migrate()
            self._columns = self._columns_of("records")
            self._chat_columns = self._columns_of("chats")
        except sqlite3.Error as error:
            self._db.close()
            raise self._error(error) from None
        except StoreError:
            self._db.close()
            raise

    def _open_private(self) -> sqlite3.Connection:
        from tui.locations import private_files

        with private_files():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=5.0
            )
            # The file exists once the first statement ran; SQLite gives the -wal and -shm
            # files the database's own permissions.
            db.execute("PRAGMA user_version").fetchone()
        for suffix in ("", *_SIDE_FILES):
            _owner_only(Path(f"{self.path}{suffix}"))
        return db

    def _open_read_only(self) -> sqlite3.Connection:
        """Open without writing anything. A WAL database in a folder we cannot write may lack
        its -shm file, which SQLite cannot then create: read it as immutable (nobody can be
        writing it there either)."""
        uri = f"file:{quote(str(self.path))}?mode=ro"
        db = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=5.0)
        try:
            db.execute("PRAGMA user_version").fetchone()
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:
            db.close()
        uri = f"file:{quote(str(self.path))}?mode=ro&immutable=1"
        return sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=5.0)

    def _error(self, error: BaseException) -> StoreError:
        reason = str(error) or type(error).__name__
        full = "database or disk is full" in reason or getattr(error, "errno", None) == (
            errno.ENOSPC
        )
        if full:
            hint = "the disk is full: free some space (nothing more is saved until then)"
        elif isinstance(error, sqlite3.DatabaseError) and "not a database" in reason:
            hint = "move it aside to start a fresh history"
        elif "readonly" in reason or "unable to open" in reason or isinstance(error, OSError):
            hint = "check the folder exists and is writable, or set FIRSTTOKEN_HOME"
        elif "locked" in reason or "busy" in reason:
            hint = "another firsttoken is writing it; try again"
        else:
            hint = "move it aside to start a fresh history"
        return StoreError(f"history database {self.path}: {reason}: {hint}")

    def _columns_of(self, table: str) -> set[str]:
        return {row[1] for row in self._db.execute(f"PRAGMA table_info({table})").fetchall()}

    def _check_ours(self) -> None:
        """A SQLite file of another program (a path set by mistake) is refused, never changed:
        firsttoken's history has a schema version and its three tables, or nothing at all."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        tables = {
            row[0]
            for row in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ).fetchall()
        }
        ours = {"chats", "messages", "records"}
        if (version == 0 and not tables) or (version > 0 and ours <= tables):
            return
        found = ", ".join(sorted(tables)[:5]) or "no tables"
        raise StoreError(
            f"history database {self.path}: not a firsttoken history (schema version {version}, "
            f"tables: {found}): it belongs to another program; move it aside, or set "
            "FIRSTTOKEN_HOME to keep the history elsewhere"
        )

    def _check_version(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"history database {self.path}: schema version {version} is newer than this "
                f"firsttoken understands ({SCHEMA_VERSION}): upgrade firsttoken"
            )

    def _migrate(self) -> None:
        self._check_version()
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            # Read again inside the write lock: another process may have just migrated.
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                self._create_v1()
                version = 1
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[target]:
                    self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def _create_v1(self) -> None:
        # executescript would COMMIT our transaction first; run the statements one by one.
        for statement in _SCHEMA_V1.split(";"):
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

    def new_chat(self, title: str, model: str, kind: str = APP_CHAT) -> int:
        """A new chat made by `kind` (APP_CHAT or ASK_CHAT); returns its id."""
        if kind not in CHAT_KINDS:
            raise ValueError(f"chat kind {kind!r}: expected one of {', '.join(CHAT_KINDS)}")
        now = time.time()
        with self._locked() as db:
            cursor = db.execute(
                "INSERT INTO chats (title, model, created_at_epoch, kind, last_used_epoch)"
                " VALUES (?, ?, ?, ?, ?)",
                (title, model, now, kind, now),
            )
            return int(cursor.lastrowid or 0)

    @staticmethod
    def _used(db: sqlite3.Connection, chat_id: int) -> None:
        """The chat was used now (inside the caller's transaction): `--resume` and every chat
        list go by it."""
        db.execute("UPDATE chats SET last_used_epoch = ? WHERE id = ?", (time.time(), chat_id))

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
            self._used(db, chat_id)
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
            if same < len(stored) or same < len(encoded):
                self._used(db, chat_id)
            db.execute("COMMIT")

    def save_record(
        self,
        record: RequestRecord,
        reply_text: str,
        chat_id: int | None = None,
        *,
        incomplete: bool = False,
        replaces: str | None = None,
        reasoning_text: str = "",
    ) -> None:
        """Save (or overwrite, by record id) a record and its reply. `incomplete`: the reply
        is still arriving (a later save replaces it). `replaces`: the id of an incomplete
        record this one supersedes (deleted in the same transaction). `reasoning_text`: the
        model's thinking, kept in the record's JSON beside its figures (`records()` returns it
        as `reasoning_text`)."""
        data = record.to_dict()
        if reasoning_text:
            data["reasoning_text"] = reasoning_text
        with self._locked() as db:
            db.execute("BEGIN IMMEDIATE")
            if replaces is not None and replaces != record.id:
                db.execute("DELETE FROM records WHERE id = ?", (replaces,))
            db.execute(
                "INSERT OR REPLACE INTO records (id, chat_id, started_at_epoch, model,"
                " endpoint_host, status, error_kind, streamed, simulated, trim_enabled, ttft_ms,"
                " total_ms, tpot_ms, output_tokens, prompt_tokens_estimated, record_json,"
                " reply_text, incomplete, connection_reused, phases_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    int(incomplete),
                    None if record.connection_reused is None else int(record.connection_reused),
                    None if record.phases_ms is None else json.dumps(record.phases_ms),
                ),
            )
            if chat_id is not None:
                self._used(db, chat_id)
            db.execute("COMMIT")

    # -- reads ---------------------------------------------------------------------------------

    def chats(self, kind: str | None = None, limit: int = -1) -> list[dict[str, Any]]:
        """The chats (of `kind` only, when given), the last used first, at most `limit` (-1:
        all): id, title, kind, model and endpoint_host (those of its latest record: what it
        went on with; the chat's first model and None before any record), created_at_epoch,
        last_used_epoch, message_count."""
        columns = self._chat_columns
        # A file not migrated yet (read-only): an app chat, last used at its latest record.
        kind_of = "c.kind" if "kind" in columns else f"'{APP_CHAT}'"
        used = (
            "c.last_used_epoch"
            if "last_used_epoch" in columns
            else "MAX(c.created_at_epoch, COALESCE((SELECT MAX(r.started_at_epoch)"
            " FROM records r WHERE r.chat_id = c.id), 0))"
        )
        latest = (
            "(SELECT r.{} FROM records r WHERE r.chat_id = c.id"
            " ORDER BY r.started_at_epoch DESC, r.rowid DESC LIMIT 1)"
        )
        query = (
            f"SELECT * FROM (SELECT c.id, c.title, {kind_of} AS kind,"
            f" COALESCE({latest.format('model')}, c.model), {latest.format('endpoint_host')},"
            f" c.created_at_epoch, {used} AS used,"
            " (SELECT COUNT(*) FROM messages m WHERE m.chat_id = c.id) FROM chats c)"
        )
        params: list[Any] = []
        if kind is not None:
            query += " WHERE kind = ?"
            params.append(kind)
        query += " ORDER BY used DESC, id DESC LIMIT ?"
        params.append(limit)
        with self._locked() as db:
            rows = db.execute(query, params).fetchall()
        names = ("id", "title", "kind", "model", "endpoint_host", "created_at_epoch",
                 "last_used_epoch", "message_count")  # fmt: skip
        return [dict(zip(names, row, strict=True)) for row in rows]

    def messages(self, chat_id: int) -> list[dict[str, Any]]:
        with self._locked() as db:
            rows = db.execute(
                "SELECT json FROM messages WHERE chat_id = ? ORDER BY position", (chat_id,)
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def records(self, limit: int = 100, chat_id: int | None = None) -> list[dict[str, Any]]:
        """Newest first: each RequestRecord.to_dict() plus `reply_text`, `reasoning_text` ("" when
        the model sent none), `chat_id` and `incomplete` (True: the process stopped before the
        reply ended; `limit` -1: all)."""
        incomplete = "incomplete" if "incomplete" in self._columns else "0"
        query = f"SELECT record_json, reply_text, chat_id, {incomplete} FROM records"
        params: tuple[Any, ...] = ()
        if chat_id is not None:
            query += " WHERE chat_id = ?"
            params = (chat_id,)
        query += " ORDER BY started_at_epoch DESC, rowid DESC LIMIT ?"
        with self._locked() as db:
            rows = db.execute(query, (*params, limit)).fetchall()
        out = []
        for record_json, reply_text, row_chat_id, row_incomplete in rows:
            data = json.loads(record_json)
            data["reply_text"] = reply_text
            data.setdefault("reasoning_text", "")
            data["chat_id"] = row_chat_id
            data["incomplete"] = bool(row_incomplete)
            out.append(data)
        return out

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
