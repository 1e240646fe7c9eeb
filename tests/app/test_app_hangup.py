"""The app ends when its terminal goes away, even if it was started with SIGHUP ignored, and
a reply streaming at that moment keeps its record and what arrived."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tui.engine.store.database import Store
from tui.locations import history_db_path

pytestmark = pytest.mark.e2e


def _become_terminal_owner_ignoring_hangup() -> None:
    # As `nohup` would leave it: SIGHUP ignored. The pty becomes the controlling terminal.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _read_until(master: int, wanted: bytes, screen: bytes, timeout_s: float = 30) -> bytes:
    deadline = time.monotonic() + timeout_s
    while wanted not in screen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            screen += os.read(master, 65536)
    assert wanted in screen, f"{wanted!r} never reached the screen"
    return screen


def test_closing_the_terminal_ends_the_app_and_keeps_the_reply(isolated_home: Path) -> None:
    master, slave = os.openpty()
    env = {**os.environ, "FIRSTTOKEN_HOME": str(isolated_home), "TERM": "xterm-256color"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tui"],  # no key: the demo endpoint, 60 tokens/s
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
        preexec_fn=_become_terminal_owner_ignoring_hangup,
    )
    os.close(slave)
    try:
        screen = _read_until(master, b"firsttoken", b"")
        os.write(master, b"reply 3000 tokens\r")
        _read_until(master, b"demo reply", screen)  # the reply is streaming
        os.close(master)  # the terminal window closes
        master = -1
        process.wait(timeout=30)
    finally:
        if master >= 0:
            os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    with Store(history_db_path()) as store:
        (record,) = store.records()
        assert record["status"] == "cancelled"
        assert record["reply_text"].startswith("## firsttoken demo reply")
        chat_id = store.chats()[0]["id"]
        assert [m["role"] for m in store.messages(chat_id)] == ["user", "assistant"]
