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
import re
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
from tui.engine.metrics.statistics import LatencyRow
from tui.engine.store.migrations import SCHEMA_VERSION, statements_for
from tui.engine.store.migrations.v007_figure_columns import FIGURES

# The kinds of chat: made in the app (its chat picker lists them), by `ask` (one question), or
# a race's (one lane per target: every target's reply to each prompt).
APP_CHAT = "app"
ASK_CHAT = "ask"
RACE_CHAT = "race"
CHAT_KINDS = (APP_CHAT, ASK_CHAT, RACE_CHAT)

_SIDE_FILES = ("-wal", "-shm", "-journal")
SEARCH_LIMIT = 200  # chats a search returns at most: a screenful and more


def _search_words(text: str) -> list[str]:
    """The words of a search as FTS5 reads them (letters and digits), none of its syntax."""
    return re.findall(r"\w+", text)[:16]


def _like_escaped(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class StoreError(Exception):
    """One line naming the database file and what to do."""


def _index_message(db: sqlite3.Connection, row_id: int, message: dict[str, Any]) -> None:
    """A new message into the search index (messages' delete and update triggers keep it in
    step after that). Text content goes in as it is: SQLite's json_extract would parse the
    whole JSON again, a peak of several times a long reply's size."""
    content = message.get("content")
    if isinstance(content, str):
        db.execute("INSERT INTO message_search (rowid, text) VALUES (?, ?)", (row_id, content))
    else:  # parts or nothing: what the index's view reads, so a later delete matches it
        db.execute(
            "INSERT INTO message_search (rowid, text) SELECT id, text FROM message_text"
            " WHERE id = ?",
            (row_id,),
        )


def _latency_row(row: tuple[Any, ...]) -> LatencyRow:
    """A `latency_rows` row: its columns, then its record's extracted fields (SQLite parses a
    record's JSON once for all four); anything of the wrong type, as an older or damaged file
    may hold, reads as unknown."""
    model, host, epoch, status, kind, streamed, simulated, ttft, total, tpot = row[:10]
    answer, met, prompt, cached = row[10:]
    return LatencyRow(
        str(model),
        str(host),
        float(epoch),
        status == _OK,
        kind,
        bool(streamed),
        bool(simulated),
        ttft,
        total,
        tpot,
        answer if isinstance(answer, (int, float)) else None,
        None if met is None else bool(met),
        prompt if isinstance(prompt, int) else None,
        cached if isinstance(cached, int) else None,
    )


_OK = RequestStatus.OK.value


def _cached_tokens(record: RequestRecord) -> int | None:
    cached = (record.server or {}).get("cached_tokens")
    return cached if isinstance(cached, int) and not isinstance(cached, bool) else None


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
            # A file from before races (read-only, not migrated): one lane, no lane names.
            self._lanes = "lane" in self._columns_of("messages")
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
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in statements_for(target):
                    self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

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

    def add_message(self, chat_id: int, message: dict[str, Any], lane: int = 0) -> int:
        """Append a message (any OpenAI chat message dict) to a chat (to one lane of a race's
        chat); returns its row id."""
        with self._locked() as db:
            db.execute("BEGIN IMMEDIATE")
            (position,) = db.execute(
                "SELECT COALESCE(MAX(position) + 1, 0) FROM messages WHERE chat_id = ?"
                " AND lane = ?",
                (chat_id, lane),
            ).fetchone()
            cursor = db.execute(
                "INSERT INTO messages (chat_id, lane, position, role, json) VALUES (?, ?, ?, ?, ?)",
                (chat_id, lane, position, str(message.get("role", "")), json.dumps(message)),
            )
            _index_message(db, int(cursor.lastrowid or 0), message)
            self._used(db, chat_id)
            db.execute("COMMIT")
            return int(cursor.lastrowid or 0)

    def sync_messages(self, chat_id: int, messages: list[dict[str, Any]], lane: int = 0) -> None:
        """Make the chat's stored messages exactly `messages` (a retried reply, a changed
        system prompt): rows up to the first difference stay, the rest are rewritten. The
        replies a retry replaced are not lost: every request's record keeps its reply text."""
        encoded = [json.dumps(message) for message in messages]
        with self._locked() as db:
            db.execute("BEGIN IMMEDIATE")
            stored = db.execute(
                "SELECT position, json FROM messages WHERE chat_id = ? AND lane = ?"
                " ORDER BY position",
                (chat_id, lane),
            ).fetchall()
            same = 0
            while same < min(len(stored), len(encoded)) and stored[same][1] == encoded[same]:
                same += 1
            if same < len(stored):
                db.execute(
                    "DELETE FROM messages WHERE chat_id = ? AND lane = ? AND position >= ?",
                    (chat_id, lane, stored[same][0]),
                )
            first = stored[same - 1][0] + 1 if same else 0
            for offset, (message, text) in enumerate(
                zip(messages[same:], encoded[same:], strict=True)
            ):
                cursor = db.execute(
                    "INSERT INTO messages (chat_id, lane, position, role, json)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (chat_id, lane, first + offset, str(message.get("role", "")), text),
                )
                _index_message(db, int(cursor.lastrowid or 0), message)
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
                " reply_text, incomplete, connection_reused, phases_json, race_id,"
                " time_to_first_answer_ms, target_met, prompt_tokens_usage, cached_tokens)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " ?, ?, ?, ?)",
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
                    record.race_id,
                    record.time_to_first_answer_ms,
                    None if record.target_met is None else int(record.target_met),
                    record.prompt_tokens_usage,
                    _cached_tokens(record),
                ),
            )
            if chat_id is not None:
                self._used(db, chat_id)
            db.execute("COMMIT")

    def rename_chat(self, chat_id: int, title: str) -> bool:
        """Give a chat a title of the user's; False when there is no such chat."""
        with self._locked() as db:
            cursor = db.execute("UPDATE chats SET title = ? WHERE id = ?", (title, chat_id))
            return cursor.rowcount > 0

    def delete_chat(self, chat_id: int) -> bool:
        """Delete a chat and its messages; its requests' records stay, no longer linked to
        it (the latency history is kept whole). False when there is no such chat."""
        with self._locked() as db:
            db.execute("BEGIN IMMEDIATE")
            cursor = db.execute("DELETE FROM chats WHERE id = ?", (chat_id,))
            db.execute("COMMIT")
            return cursor.rowcount > 0

    # -- reads ---------------------------------------------------------------------------------

    def chats(
        self,
        kind: str | None = None,
        limit: int = -1,
        *,
        offset: int = 0,
        kinds: tuple[str, ...] | None = None,
        ids: list[int] | None = None,
    ) -> list[dict[str, Any]]:
        """The chats (of `kind` or `kinds` only, when given; these `ids` only), the last used
        first, at most `limit` (-1: all) after `offset`: id, title, kind, model and
        endpoint_host (those of its latest record: what it went on with; the chat's first
        model and None before any record), created_at_epoch, last_used_epoch, message_count.
        The page is chosen first and only its chats are looked into: a page of a long history
        costs what a short history's does."""
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
        wanted: list[str] = []
        params: list[Any] = []
        if kind is not None:
            kinds = (kind,)
        if kinds is not None:
            wanted.append(f"{kind_of} IN ({', '.join('?' * len(kinds))})")
            params += kinds
        if ids is not None:
            wanted.append(f"c.id IN ({', '.join('?' * len(ids))})")
            params += ids
        where = f" WHERE {' AND '.join(wanted)}" if wanted else ""
        page = f"SELECT c.id FROM chats c{where} ORDER BY {used} DESC, c.id DESC LIMIT ? OFFSET ?"
        query = (
            f"SELECT c.id, c.title, {kind_of},"
            f" COALESCE({latest.format('model')}, c.model), {latest.format('endpoint_host')},"
            f" c.created_at_epoch, {used} AS used,"
            " (SELECT COUNT(*) FROM messages m WHERE m.chat_id = c.id"
            f"{' AND m.lane = 0' if self._lanes else ''})"
            f" FROM chats c WHERE c.id IN ({page}) ORDER BY used DESC, c.id DESC"
        )
        with self._locked() as db:
            rows = db.execute(query, [*params, limit, offset]).fetchall()
        names = ("id", "title", "kind", "model", "endpoint_host", "created_at_epoch",
                 "last_used_epoch", "message_count")  # fmt: skip
        return [dict(zip(names, row, strict=True)) for row in rows]

    def chat_counts(self) -> dict[str, int]:
        """How many chats of each kind there are."""
        kind_of = "kind" if "kind" in self._chat_columns else f"'{APP_CHAT}'"
        with self._locked() as db:
            rows = db.execute(f"SELECT {kind_of}, COUNT(*) FROM chats GROUP BY 1").fetchall()
        return {str(kind): int(count) for kind, count in rows}

    def search_chats(
        self, text: str, kind: str | None = None, limit: int = SEARCH_LIMIT
    ) -> list[int]:
        """The chats whose title, model or any message holds every word of `text` (each word as
        a prefix: what is typed so far), the last used first. At most `limit`: those whose
        matching messages are the newest, read newest first until `limit` chats are found,
        so a word in every message costs no more than a rare one."""
        words = _search_words(text)
        if not words:
            return []
        kind_clause = " AND c.kind = ?" if kind is not None else ""
        kinds = [kind] if kind is not None else []
        title = " AND ".join(
            "(c.title LIKE ? ESCAPE '\\' OR c.model LIKE ? ESCAPE '\\')" for _ in words
        )
        likes = [like for word in words for like in [f"%{_like_escaped(word)}%"] * 2]
        found: dict[int, float] = {}
        with self._locked() as db:
            for chat_id, used in db.execute(
                f"SELECT c.id, c.last_used_epoch FROM chats c WHERE {title}{kind_clause}"
                " ORDER BY c.last_used_epoch DESC LIMIT ?",
                [*likes, *kinds, limit],
            ):
                found[chat_id] = used
            cursor = db.execute(
                "SELECT c.id, c.last_used_epoch FROM message_search s"
                " JOIN messages m ON m.id = s.rowid JOIN chats c ON c.id = m.chat_id"
                f" WHERE message_search MATCH ?{kind_clause} ORDER BY s.rowid DESC",
                [" ".join(f'"{word}"*' for word in words), *kinds],
            )
            for chat_id, used in cursor:
                found.setdefault(chat_id, used)
                if len(found) >= limit:
                    break
            cursor.close()
        ranked = sorted(found.items(), key=lambda item: (-item[1], -item[0]))
        return [chat_id for chat_id, _ in ranked[:limit]]

    def messages(self, chat_id: int, lane: int = 0) -> list[dict[str, Any]]:
        """A chat's messages (a race's chat: one lane's, each target's conversation)."""
        query = "SELECT json FROM messages WHERE chat_id = ?"
        params: tuple[Any, ...] = (chat_id,)
        if self._lanes:
            query += " AND lane = ?"
            params = (chat_id, lane)
        elif lane:
            return []  # a file from before races (read-only): it has no other lane
        with self._locked() as db:
            rows = db.execute(query + " ORDER BY position", params).fetchall()
        return [json.loads(r[0]) for r in rows]

    def name_lanes(self, chat_id: int, labels: list[str]) -> None:
        """A race's chat: its lanes' labels (its targets as written), lane 0 first."""
        with self._locked() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM lanes WHERE chat_id = ?", (chat_id,))
            db.executemany(
                "INSERT INTO lanes (chat_id, lane, label) VALUES (?, ?, ?)",
                [(chat_id, lane, label) for lane, label in enumerate(labels)],
            )
            db.execute("COMMIT")

    def lanes(self, chat_id: int) -> list[str]:
        """A race's chat's lane labels, lane 0 first ([] for any other chat)."""
        if not self._lanes:
            return []
        with self._locked() as db:
            rows = db.execute(
                "SELECT label FROM lanes WHERE chat_id = ? ORDER BY lane", (chat_id,)
            ).fetchall()
        return [str(row[0]) for row in rows]

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

    def latency_rows(
        self,
        since_epoch: float | None = None,
        model: str | None = None,
        endpoint_host: str | None = None,
    ) -> list[LatencyRow]:
        """Every finished record's figures that statistics read, oldest first: those started at
        or after `since_epoch`, whose model and endpoint hold `model` and `endpoint_host`
        (case-insensitive). One small JSON extraction a record, done by SQLite, so a history of
        100,000 records reads in well under a second."""
        wanted = ["incomplete = 0"] if "incomplete" in self._columns else []
        params: list[Any] = []
        if since_epoch is not None:
            wanted.append("started_at_epoch >= ?")
            params.append(since_epoch)
        for column, text in (("model", model), ("endpoint_host", endpoint_host)):
            if text:
                wanted.append(f"{column} LIKE ? ESCAPE '\\'")
                params.append(f"%{_like_escaped(text)}%")
        where = f" WHERE {' AND '.join(wanted)}" if wanted else ""
        query = (
            "SELECT model, endpoint_host, started_at_epoch, status, error_kind, streamed,"
            " simulated, ttft_ms, total_ms, tpot_ms, " + self._figure_columns() + " FROM records"
            f"{where} ORDER BY started_at_epoch, rowid"
        )
        with self._locked() as db:
            rows = db.execute(query, params).fetchall()
        return [_latency_row(row) for row in rows]

    def _figure_columns(self) -> str:
        """The figures' columns, or (a file not migrated yet, read-only) the same figures read
        from each record's JSON."""
        if "cached_tokens" in self._columns:
            return ", ".join(name for name, _, _ in FIGURES)
        return ", ".join(f"json_extract(record_json, '{path}')" for _, _, path in FIGURES)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
