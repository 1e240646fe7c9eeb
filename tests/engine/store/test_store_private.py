"""The history file: private permissions, incomplete records, schema 1 → 2, a full disk, and
reading without writing (a read-only data dir)."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tui.engine.metrics.record import RequestRecord, RequestStatus
from tui.engine.store.database import SCHEMA_VERSION, Store, StoreError
from tui.locations import private_files


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _record(**changes: object) -> RequestRecord:
    record = RequestRecord(model="m", endpoint_host="h:1", streamed=True)
    for name, value in changes.items():
        setattr(record, name, value)
    return record


def test_the_file_its_side_files_and_its_folder_are_the_owners_alone(tmp_path: Path) -> None:
    previous = os.umask(0o022)  # a usual umask: files would be 0644 without care
    try:
        folder = tmp_path / "new" / "data"
        with Store(folder / "history.sqlite3") as store:
            store.save_record(_record(), "reply")
            side = [folder / f"history.sqlite3{suffix}" for suffix in ("-wal", "-shm")]
            assert all(path.exists() for path in side)  # WAL mode: both exist while open
            assert [_mode(path) for path in side] == [0o600, 0o600]
            assert _mode(folder / "history.sqlite3") == 0o600
        assert _mode(folder) == 0o700 and _mode(folder.parent) == 0o700
    finally:
        os.umask(previous)


def test_a_file_an_older_release_left_readable_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    Store(path).close()
    path.chmod(0o644)
    Store(path).close()
    assert _mode(path) == 0o600


def test_private_files_narrows_the_umask_and_restores_it(tmp_path: Path) -> None:
    previous = os.umask(0o002)
    try:
        with private_files():
            (tmp_path / "f").write_text("x")
            (tmp_path / "d").mkdir()
        assert os.umask(0o002) == 0o002
    finally:
        os.umask(previous)
    assert _mode(tmp_path / "f") == 0o600 and _mode(tmp_path / "d") == 0o700


def test_an_incomplete_save_is_replaced_by_the_final_one(tmp_path: Path) -> None:
    with Store(tmp_path / "h.sqlite3") as store:
        chat = store.new_chat("t", "m")
        draft = _record(status=RequestStatus.ENDED_EARLY, error_kind="interrupted")
        store.save_record(draft, "par", chat, incomplete=True)
        store.save_record(draft, "partial", chat, incomplete=True)
        (saved,) = store.records()
        assert saved["incomplete"] is True and saved["reply_text"] == "partial"
        final = _record()
        store.save_record(final, "partial and the rest", chat, replaces=draft.id)
        (saved,) = store.records()
    assert saved["id"] == final.id and saved["incomplete"] is False
    assert saved["reply_text"] == "partial and the rest"


def test_a_schema_1_file_gains_the_incomplete_column(tmp_path: Path) -> None:
    from tui.engine.store.migrations import statements_for

    path = tmp_path / "h.sqlite3"
    db = sqlite3.connect(path)
    for statement in statements_for(1):
        db.execute(statement)
    db.execute(
        "INSERT INTO records VALUES ('old', NULL, 1.0, 'm', 'h:1', 'ok', NULL, 1, 0, 0,"
        " NULL, NULL, NULL, NULL, NULL, ?, 'old reply')",
        ('{"model": "m", "endpoint_host": "h:1", "streamed": true, "status": "ok"}',),
    )
    db.execute("PRAGMA user_version=1")
    db.commit()
    db.close()
    with Store(path, read_only=True) as reader:  # read-only: the file is not migrated
        (old,) = reader.records()
        assert old["incomplete"] is False
    with Store(path) as store:
        (old,) = store.records()
        assert old["reply_text"] == "old reply" and old["incomplete"] is False
        store.save_record(_record(), "new", incomplete=True)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
    db.close()


def test_a_full_disk_says_so(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    try:
        # SQLite's own size cap fails exactly as a full disk does (SQLITE_FULL).
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count={pages + 1}")
        with pytest.raises(StoreError) as caught:
            store.save_record(_record(), "x" * 200_000)
    finally:
        store.close()
    message = str(caught.value)
    assert "the disk is full: free some space" in message
    assert "fresh history" not in message


def test_a_read_only_store_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    with Store(path) as store:
        store.save_record(_record(), "kept")
    before = path.read_bytes()
    with Store(path, read_only=True) as reader:
        assert [r["reply_text"] for r in reader.records()] == ["kept"]
        with pytest.raises(StoreError, match="readonly"):
            reader.save_record(_record(), "refused")
    assert path.read_bytes() == before


def _immutable(path: Path, on: bool) -> bool:
    """`chattr ±i`: a folder nobody, root included, can create files in (False: unavailable)."""
    try:
        done = subprocess.run(
            ["chattr", "+i" if on else "-i", str(path)], capture_output=True, timeout=10
        )
    except OSError:
        return False
    return done.returncode == 0


@pytest.mark.e2e
def test_history_reads_a_data_dir_it_cannot_write(tmp_path: Path) -> None:
    """A data dir where nothing can be created (not even SQLite's -shm file): `firsttoken
    history` still lists what is there."""
    data = tmp_path / "home" / "data"
    with Store(data / "history.sqlite3") as store:
        store.save_record(_record(model="read-only-model"), "kept")
    if not _immutable(data, True):
        pytest.skip("chattr +i is not available here")
    try:
        (data / "probe").touch()
    except OSError:
        pass
    else:
        _immutable(data, False)
        pytest.skip("the immutable folder is still writable here")
    try:
        root = Path(__file__).resolve().parents[3]
        env = {**os.environ, "FIRSTTOKEN_HOME": str(tmp_path / "home")}
        done = subprocess.run(
            [sys.executable, "-m", "tui", "history"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        _immutable(data, False)
    assert done.returncode == 0, done.stderr
    assert "read-only-model" in done.stdout
