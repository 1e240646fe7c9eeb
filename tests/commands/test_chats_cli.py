"""`firsttoken chats`: the list with its kinds, --search over titles and messages (the full-text
index), rename, delete (asks unless --yes; the latency records stay), and the one-line errors."""

from __future__ import annotations

import io
import json

import pytest

from tui.cli import main
from tui.engine.metrics.record import RequestRecord
from tui.engine.store.database import ASK_CHAT, Store
from tui.locations import history_db_path


def _history() -> tuple[int, int, int]:
    with Store(history_db_path()) as store:
        first = store.new_chat("prefill questions", "qwen")
        store.add_message(first, {"role": "user", "content": "what does chunked prefill do"})
        second = store.new_chat("decode speed", "llama")
        store.add_message(second, {"role": "user", "content": "speculative decoding drafts"})
        record = RequestRecord(model="llama", endpoint_host="cpu:8080", streamed=True)
        store.save_record(record, "a reply", chat_id=second)
        asked = store.new_chat("one question", "qwen", kind=ASK_CHAT)
    return first, second, asked


def _listed(capsys: pytest.CaptureFixture[str], *flags: str) -> list[int]:
    assert main(["chats", "--json", *flags]) == 0
    return [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()]


def test_list_search_and_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    first, second, asked = _history()
    assert _listed(capsys) == [asked, second, first]
    assert _listed(capsys, "--kind", "ask") == [asked]
    assert _listed(capsys, "--search", "chunk") == [first]  # a message's word, as a prefix
    assert _listed(capsys, "--search", "decode") == [second]  # the title
    assert _listed(capsys, "--search", "nothing-like-it") == []
    assert main(["chats"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:2] == ["chat", "kind"] and len(table) == 4


def test_rename_then_find_it_by_its_new_title(capsys: pytest.CaptureFixture[str]) -> None:
    first, _, _ = _history()
    assert main(["chats", "rename", str(first), "  TTFT   notes "]) == 0
    assert "renamed “TTFT notes”" in capsys.readouterr().err
    assert _listed(capsys, "--search", "notes") == [first]
    assert main(["chats", "rename", str(first), "   "]) == 2
    assert "TITLE is empty" in capsys.readouterr().err


def test_delete_asks_and_keeps_the_records(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, second, _ = _history()
    assert main(["chats", "delete", str(second)]) == 2  # nobody at a terminal to answer
    assert "add --yes" in capsys.readouterr().err

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    assert main(["chats", "delete", str(second)]) == 0
    err = capsys.readouterr().err
    assert "[y/N]" in err and "not deleted" in err and second in _listed(capsys)
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    assert main(["chats", "delete", str(second)]) == 0
    assert second not in _listed(capsys)
    with Store(history_db_path()) as store:
        (kept,) = [r for r in store.records(limit=-1) if r["model"] == "llama"]
        assert kept["chat_id"] is None  # the latency record stays, unlinked
        assert store.search_chats("speculative") == []  # its messages left the index too
    assert main(["chats", "delete", str(second), "--yes"]) == 2
    assert "no such chat" in capsys.readouterr().err
