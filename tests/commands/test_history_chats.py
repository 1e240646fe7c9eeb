"""`history --chats` and `--resume` over real history files: the kind of each chat (the app's,
or an `ask` run's), the last used first, `--limit` honoured, long names cut; `--resume` opens
the app's last used chat."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import firsttoken

from tui.commands.open_app import _chat_to_resume
from tui.engine.metrics.record import RequestRecord
from tui.engine.store.database import ASK_CHAT, Store
from tui.locations import history_db_path

pytestmark = pytest.mark.e2e


def _instant_config(tmp_path: Path) -> Path:
    config = tmp_path / "config.toml"
    config.write_text('[demo]\npreset = "instant"\n', encoding="utf-8")
    return config


def test_ask_runs_are_listed_as_such_and_the_last_used_chat_first(tmp_path: Path) -> None:
    with Store(history_db_path()) as store:
        app_chat = store.new_chat("made in the app", "m")
    asked = firsttoken("ask", "--config", str(_instant_config(tmp_path)), "--json", "hello")
    assert asked.returncode == 0, asked.stderr
    ask_chat = json.loads(asked.stdout)["chat_id"]
    with Store(history_db_path()) as store:
        store.add_message(app_chat, {"role": "user", "content": "used again"})

    listed = firsttoken("history", "--chats")
    assert listed.returncode == 0, listed.stderr
    header, first, second = listed.stdout.splitlines()
    assert header.split()[:4] == ["chat", "kind", "last", "used"]
    assert first.split()[:2] == [str(app_chat), "app"]
    assert second.split()[:2] == [str(ask_chat), "ask"]
    assert "127.0.0.1:" in second  # the endpoint it asked

    limited = firsttoken("history", "--chats", "--limit", "1")
    assert limited.returncode == 0, limited.stderr
    assert [line.split() for line in limited.stdout.splitlines()[1:]] == [first.split()]
    as_json = firsttoken("history", "--chats", "--json", "--limit", "5")
    kinds = [json.loads(line)["kind"] for line in as_json.stdout.splitlines()]
    assert kinds == ["app", "ask"]


def test_a_huge_model_name_is_cut_in_every_table(isolated_home: Path) -> None:
    huge = "m" * 2_000_000
    with Store(history_db_path()) as store:
        for n in range(30):
            chat = store.new_chat(f"chat {n}", "small")
            model = huge if n == 3 else f"model-{n}"
            store.save_record(
                RequestRecord(model=model, endpoint_host="h:1", streamed=True), "r", chat_id=chat
            )
    for args in (("history", "--chats", "--limit", "30"), ("history", "--limit", "30")):
        result = firsttoken(*args)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert len(lines) == 31
        assert max(len(line) for line in lines) < 250
        assert any("mmmmm…" in line for line in lines)


def test_resume_opens_the_apps_last_used_chat_not_the_newest(isolated_home: Path) -> None:
    """Chat in A, start B, back to A and send more: `--resume` opens A; `ask` runs never."""
    with Store(history_db_path()) as store:
        a = store.new_chat("a", "m")
        b = store.new_chat("b", "m")
        store.add_message(b, {"role": "user", "content": "in b"})
        store.add_message(a, {"role": "user", "content": "back in a"})
        store.new_chat("a later one-shot question", "m", kind=ASK_CHAT)
        assert _chat_to_resume(store, 0, with_messages=False) == (a, None)
        store.save_record(RequestRecord(model="m", endpoint_host="h:1", streamed=True), "", b)
        assert _chat_to_resume(store, 0, with_messages=False) == (b, None)


def test_resume_with_only_ask_runs_says_how_to_open_one(tmp_path: Path) -> None:
    with Store(history_db_path()) as store:
        run = store.new_chat("one-shot", "m", kind=ASK_CHAT)
    result = firsttoken("--resume")
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert "only `ask` runs" in line and "--resume ID" in line
    with Store(history_db_path()) as store:
        assert _chat_to_resume(store, run, with_messages=False) == (run, None)


def _folder_in_place(path: Path) -> None:
    path.mkdir(parents=True)


def _another_programs_database(path: Path) -> None:
    import sqlite3

    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE chats (room TEXT, line TEXT)")


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_folder_in_place, "is a folder, not a file: move the folder aside"),
        (_another_programs_database, "not a firsttoken history (schema version 0, tables: chats)"),
    ],
)
def test_a_history_path_that_is_not_a_history_is_one_line(
    isolated_home: Path, tmp_path: Path, make, says: str
) -> None:
    path = history_db_path()
    make(path)
    listed = firsttoken("history", "--chats")
    assert listed.returncode == 1
    (line,) = listed.stderr.splitlines()
    assert line.startswith(f"firsttoken: error: history database {path}: ") and says in line
    assert "disk I/O" not in line and "already exists" not in line
    # `ask` still answers, with one warning that names the file.
    asked = firsttoken("ask", "--config", str(_instant_config(tmp_path)), "hi")
    assert asked.returncode == 0
    (warning,) = [w for w in asked.stderr.splitlines() if "history database" in w]
    assert warning.startswith("firsttoken: warning: not saved:") and says in warning
