"""The app ends when its terminal goes away, even if it was started with SIGHUP ignored."""

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


def _become_terminal_owner_ignoring_hangup() -> None:
    # As `nohup` would leave it: SIGHUP ignored. The pty becomes the controlling terminal.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_closing_the_terminal_ends_the_app(isolated_home: Path) -> None:
    master, slave = os.openpty()
    env = {**os.environ, "FIRSTTOKEN_HOME": str(isolated_home), "TERM": "xterm-256color"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tui"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
        preexec_fn=_become_terminal_owner_ignoring_hangup,
    )
    os.close(slave)
    try:
        screen = b""
        deadline = time.monotonic() + 30
        while b"firsttoken" not in screen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                screen += os.read(master, 65536)
        assert b"firsttoken" in screen, "the app never drew its screen"
        os.close(master)  # the terminal window closes
        master = -1
        process.wait(timeout=30)
    finally:
        if master >= 0:
            os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGHUP
