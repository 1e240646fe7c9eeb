"""`ask` keeps the prompt and the streaming reply in the history: a real `python -m tui ask`
against a slow demo endpoint, killed mid-reply with SIGKILL, SIGTERM or SIGHUP.

No wall-clock thresholds: the test reads stdout until some text has arrived, then waits until
the history holds a save made after that text was printed, then kills; what is stored must be
at least that text (SIGKILL), or everything printed (SIGTERM, SIGHUP: a final save).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import ROOT
from helpers.client import demo

from tui.engine.store.database import Store
from tui.locations import history_db_path

pytestmark = pytest.mark.e2e

SEEN = 60  # characters of reply on stdout before the kill is prepared


@pytest.fixture(scope="module")
def slow():
    # 25 tokens/s over 400 tokens: a 16 s reply, killed within its first seconds.
    with demo("instant", decode_tokens_per_s=25.0, reply_tokens=400) as server:
        yield server


def _start(base_url: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tui", "ask", "--base-url", base_url, "tell me a long story"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )


def _read_until(process: subprocess.Popen[bytes], count: int) -> bytes:
    assert process.stdout is not None
    seen = b""
    while len(seen.decode(errors="ignore")) < count:
        data = process.stdout.read1(65536)  # type: ignore[attr-defined]
        assert data, "the reply ended before the kill"
        seen += data
    return seen


def _records() -> list[dict]:
    path = history_db_path()
    if not path.exists():
        return []
    with Store(path, read_only=True) as store:
        return store.records(limit=5)


def _wait_for_save_of(printed: str) -> dict:
    """Poll the history (read-only) until a save holds at least what was already printed:
    that save was made after `printed` reached stdout."""
    import time

    while True:  # the reply lasts 16 s; each poll is one read-only query
        records = _records()
        if records and len(records[0]["reply_text"]) >= len(printed):
            return records[0]
        time.sleep(0.05)


def _reply_of(stdout: bytes) -> str:
    return stdout.decode()


def test_sigkill_leaves_what_was_saved_marked_incomplete(slow) -> None:
    process = _start(slow.base_url)
    try:
        printed = _reply_of(_read_until(process, SEEN))
        saved = _wait_for_save_of(printed)  # a save made after `printed` reached stdout
        process.kill()
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    (record, *_) = _records()
    assert record["id"] == saved["id"]
    assert record["incomplete"] is True and record["error_kind"] == "interrupted"
    assert record["reply_text"].startswith(printed[: len(record["reply_text"])])
    assert len(record["reply_text"]) >= len(printed)
    with Store(history_db_path(), read_only=True) as store:
        (chat,) = store.chats()
        assert chat["id"] == record["chat_id"] and chat["title"] == "tell me a long story"
        assert store.messages(chat["id"])[0] == {
            "role": "user",
            "content": "tell me a long story",
        }
    from helpers.cli import firsttoken

    shown = firsttoken("history")
    assert shown.returncode == 0 and "incomplete" in shown.stdout


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_save_everything_printed(slow, signum: int) -> None:
    process = _start(slow.base_url)
    try:
        printed = _read_until(process, SEEN)
        process.send_signal(signum)
        rest, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signum, err
    assert b"Traceback" not in err
    stdout = (printed + rest).decode()
    (record, *_) = _records()
    assert record["status"] == "cancelled" and record["incomplete"] is False
    assert record["reply_text"] and stdout.startswith(record["reply_text"])
    assert stdout.rstrip("\n") == record["reply_text"].rstrip("\n")
    with Store(history_db_path(), read_only=True) as store:
        messages = store.messages(record["chat_id"])
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"] == record["reply_text"]


def test_the_prompt_is_saved_before_the_request_is_sent(tmp_path: Path) -> None:
    from helpers.cli import firsttoken
    from helpers.client import closed_port

    done = firsttoken("ask", "--base-url", f"http://127.0.0.1:{closed_port()}/v1", "kept prompt")
    assert done.returncode == 1
    with Store(history_db_path(), read_only=True) as store:
        (chat,) = store.chats()
        assert store.messages(chat["id"]) == [{"role": "user", "content": "kept prompt"}]
        (record,) = store.records()
    assert record["status"] == "error" and record["chat_id"] == chat["id"]
    assert record["incomplete"] is False
