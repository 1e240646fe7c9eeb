"""`firsttoken export`: Markdown with each reply's figures under it, JSON that `--messages`
reads back unchanged (a real `ask --messages` round trip), a file or stdout (inert), and the
one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import firsttoken

from tui.cli import main
from tui.commands._common import load_messages
from tui.engine.metrics.record import RequestRecord
from tui.engine.store.database import Store
from tui.locations import history_db_path

MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Why is TTFT slow?"},
    {"role": "assistant", "content": "Prefill.\n\n```\ncode with ``` inside\n```"},
    {"role": "user", "content": "And with a cache?"},
    {"role": "assistant", "content": "Faster: \x1b]52;c;aGk=\x07 cached."},
]


def _chat() -> int:
    with Store(history_db_path()) as store:
        chat = store.new_chat("Why is TTFT slow?", "qwen")
        store.sync_messages(chat, MESSAGES)
        retried = RequestRecord(model="qwen", endpoint_host="gpu:8000", streamed=True)
        retried.ttft_ms, retried.total_ms = 999.0, 2000.0
        store.save_record(retried, "a reply the user retried", chat_id=chat)
        for text, ttft in ((MESSAGES[2]["content"], 420.0), (MESSAGES[4]["content"], 35.0)):
            record = RequestRecord(model="qwen", endpoint_host="gpu:8000", streamed=True)
            record.ttft_ms, record.total_ms, record.output_tokens = ttft, 3120.0, 128
            store.save_record(record, text, chat_id=chat)
    return chat


def test_markdown_puts_each_replys_figures_under_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = _chat()
    target = tmp_path / "chat.md"
    assert main(["export", str(chat), "-o", str(target)]) == 0
    assert f"chat {chat} written to {target}" in capsys.readouterr().err
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# Why is TTFT slow?\n")
    notes = [line for line in text.splitlines() if line.startswith("> ")]
    assert [n.split(" · ")[:3] for n in notes] == [
        ["> TTFT 420 ms", "total 3.12 s", "128 tokens"],
        ["> TTFT 35 ms", "total 3.12 s", "128 tokens"],
    ]  # the retried reply's record is not under any message
    assert text.index("Prefill.") < text.index("> TTFT 420 ms") < text.index("And with a cache?")
    assert "\x1b]52" in text  # a file keeps the text as it was said


def test_stdout_is_inert(capsys: pytest.CaptureFixture[str]) -> None:
    chat = _chat()
    for form in ("md", "json"):
        assert main(["export", str(chat), "--format", form]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out


@pytest.mark.e2e
def test_json_goes_back_through_messages_unchanged(tmp_path: Path) -> None:
    chat = _chat()
    target = tmp_path / "chat.json"
    done = firsttoken("export", str(chat), "-o", str(target))
    assert done.returncode == 0, done.stderr
    assert json.loads(target.read_text(encoding="utf-8")) == MESSAGES
    assert load_messages(target) == MESSAGES
    printed = firsttoken("export", str(chat), "--format", "json")
    assert json.loads(printed.stdout) == MESSAGES  # escaped, not changed
    config = tmp_path / "config.toml"
    config.write_text('[demo]\npreset = "instant"\n', encoding="utf-8")
    asked = firsttoken("ask", "--config", str(config), "--json", "--messages", str(target))
    assert asked.returncode == 0, asked.stderr
    assert "5 messages" in json.loads(asked.stdout)["reply"]


def test_errors_name_the_chat_and_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "7"]) == 2
    assert "export 7: no such chat" in capsys.readouterr().err
    chat = _chat()
    assert main(["export", str(chat + 1)]) == 2
    assert main(["export", str(chat), "-o", str(tmp_path / "missing" / "x.md")]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("firsttoken: error: -o ") and "writable" in err
    assert main(["export", "0"]) == 2
