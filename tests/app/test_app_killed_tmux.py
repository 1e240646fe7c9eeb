"""The real `firsttoken` in tmux, killed mid-reply: what the history keeps is at least what was
on screen a second before the kill (SIGKILL), or everything that arrived (SIGTERM, SIGHUP,
which also give the terminal back); the next `--resume` shows a killed reply, marked
incomplete.

The reply comes from the fault server's `numbered` stream ("w0001 w0002 …", 50 words a
second), so the highest word number in a pane capture says how far the screen had got, and
the highest in the stored text how far the history had. Captures are stamped when they
return: the pane held at least that much by then."""

from __future__ import annotations

import os
import re
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.fault_server import FaultServer
from helpers.tmux_app import TmuxApp

from tui.engine.store.database import Store
from tui.locations import history_db_path

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        shutil.which("tmux") is None,
        reason="tmux is not installed (needed to drive a real terminal)",
    ),
]

WORD = re.compile(r"\bw(\d{4})\b")
SEEN_BEFORE_KILL = 60  # words on screen before the kill is prepared
CAPTURE_FOR_S = 1.5  # keep capturing this long after that, then kill


@pytest.fixture(scope="module")
def faults() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


def highest(text: str) -> int:
    return max((int(n) for n in WORD.findall(text)), default=0)


def ready(screen: str) -> bool:
    return "enter send" in screen and "/ 6,000" in screen


def records() -> list[dict]:
    with Store(history_db_path(), read_only=True) as store:
        return store.records(limit=10)


def _streaming(app: TmuxApp, home: Path, base_url: str) -> list[tuple[float, int]]:
    """Start the app, send, and capture the pane until the reply is well under way: each
    capture's return time and the highest word it showed."""
    app.start(home, "--base-url", base_url)
    app.wait_for(ready, 60, "the app to be ready")
    app.keys("tell me everything", literal=True)
    app.wait_for(lambda s: "tell me everything" in s, 10, "the typed prompt")
    app.keys("Enter")
    screen = app.wait_for(lambda s: highest(s) >= SEEN_BEFORE_KILL, 60, "the reply to stream")
    snapshots = [(time.monotonic(), highest(screen))]
    until = time.monotonic() + CAPTURE_FOR_S
    while time.monotonic() < until:
        screen = app.capture()
        snapshots.append((time.monotonic(), highest(screen)))
        time.sleep(0.05)
    return snapshots


def test_sigkill_keeps_what_was_on_screen_a_second_before_and_resume_shows_it(
    faults: FaultServer, isolated_home: Path, tmp_path: Path
) -> None:
    app = TmuxApp(tmp_path)
    try:
        snapshots = _streaming(app, isolated_home, faults.url("numbered", "sigkill"))
        killed_at = time.monotonic()
        os.kill(app.app_pid(), signal.SIGKILL)
    finally:
        app.kill_server()
    (record,) = records()
    stored = highest(record["reply_text"])
    on_screen = max(seen for at, seen in snapshots if at <= killed_at - 1.0)
    print(f"SIGKILL: w{on_screen:04d} on screen a second before, w{stored:04d} stored")
    assert on_screen >= SEEN_BEFORE_KILL
    assert stored >= on_screen, (stored, on_screen)
    assert record["incomplete"] and record["error_kind"] == "interrupted"
    assert record["reply_text"].startswith("w0001 w0002")

    again = TmuxApp(tmp_path)
    try:
        again.start(isolated_home, "--base-url", faults.url("healthy", "sigkill"), "--resume")
        screen = again.wait_for(
            lambda s: "incomplete" in s and f"w{stored:04d}" in s, 60, "the resumed partial reply"
        )
        assert "tell me everything" in screen or highest(screen) > 0
        again.keys("C-q")
        assert again.exit_code() == 0
    finally:
        again.kill_server()
    with Store(history_db_path(), read_only=True) as store:
        chat = store.chats()[0]
        messages = store.messages(chat["id"])
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"] == record["reply_text"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_save_the_reply_and_give_the_terminal_back(
    signum: int, faults: FaultServer, isolated_home: Path, tmp_path: Path
) -> None:
    app = TmuxApp(tmp_path)
    try:
        snapshots = _streaming(app, isolated_home, faults.url("numbered", f"sig{signum}"))
        os.kill(app.app_pid(), signum)
        code = app.exit_code()
        state = app.pane_state()
        raw = app.raw_bytes()
    finally:
        app.kill_server()
    assert code == 128 + signum
    # The terminal is given back: alternate screen left, mouse tracking off, cursor shown.
    assert state == {
        "alternate_on": "0",
        "mouse_any_flag": "0",
        "mouse_standard_flag": "0",
        "cursor_flag": "1",
    }, state
    assert b"\x1b[?1049l" in raw
    (record,) = records()
    assert record["status"] == "cancelled" and not record["incomplete"]
    assert highest(record["reply_text"]) >= max(seen for _at, seen in snapshots)
    with Store(history_db_path(), read_only=True) as store:
        chat = store.chats()[0]
        messages = store.messages(chat["id"])
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"] == record["reply_text"]
