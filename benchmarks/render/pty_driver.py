"""Run a terminal program in a fixed-size pseudo-terminal and record everything it writes.

Two threads keep the app from ever blocking on its own output: the *reader* only does
os.read() and appends (perf_counter, bytes) to a queue, so the kernel's small pty buffer is
drained at once; the *screen* thread (screen_watch.py) feeds the bytes into the emulator,
which is slow pure Python. Timestamps are taken at read time, before any emulation cost.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
import time
from collections.abc import Mapping, Sequence

from ptyprocess import PtyProcess

COLUMNS = 120
ROWS = 40


def terminal_env(base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of a modern 24-bit terminal, so every app picks the same output path."""
    env = {k: v for k, v in base.items() if not k.startswith(("TEXTUAL", "TMUX", "STY"))}
    env.update(TERM="xterm-256color", COLORTERM="truecolor", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    env["COLUMNS"], env["LINES"] = str(COLUMNS), str(ROWS)
    env.update(extra)
    return env


class PtyApp:
    """A child process on a pty; `chunks` receives (perf_counter, bytes) as soon as they arrive."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        cwd: str | None = None,
        rows: int = ROWS,
        cols: int = COLUMNS,
    ) -> None:
        self.chunks: queue.SimpleQueue[tuple[float, bytes] | None] = queue.SimpleQueue()
        self.bytes_read = 0
        self.started_at = time.perf_counter()
        self.process = PtyProcess.spawn(list(argv), env=dict(env), cwd=cwd, dimensions=(rows, cols))
        self.pid: int = self.process.pid
        self._reader = threading.Thread(target=self._read_forever, name="pty-reader", daemon=True)
        self._reader.start()

    def _read_forever(self) -> None:
        fd = self.process.fd
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            now = time.perf_counter()
            self.bytes_read += len(data)
            self.chunks.put((now, data))
        self.chunks.put(None)

    def write(self, data: str | bytes) -> float:
        """Write to the app's terminal input; returns perf_counter just before the write."""
        raw = data.encode() if isinstance(data, str) else data
        now = time.perf_counter()
        os.write(self.process.fd, raw)
        return now

    def type_text(self, text: str, per_key_s: float = 0.0) -> None:
        """Type text; with per_key_s > 0 one key at a time, as some inputs drop pasted bursts."""
        if per_key_s <= 0:
            self.write(text)
            return
        for ch in text:
            self.write(ch)
            time.sleep(per_key_s)

    def alive(self) -> bool:
        return self.process.isalive()

    def stop(self, grace_s: float = 2.0) -> None:
        """Ask the process group to end (SIGTERM), then SIGKILL what is left."""
        if not self.process.isalive():
            return
        try:
            os.killpg(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace_s
        while self.process.isalive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.process.isalive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):  # already gone; nothing left to release
            self.process.close(force=True)
