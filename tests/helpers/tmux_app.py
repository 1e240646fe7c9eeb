"""The real `firsttoken` command in a tmux pane of its own tmux server (`Tmux`), and with every
byte it writes to the terminal recorded (`pipe-pane`), its process id and its exit code
(`TmuxApp`)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class Tmux:
    """One tmux server on its own socket, so the test never touches the user's sessions."""

    def __init__(self) -> None:
        self.socket = f"firsttoken-test-{uuid.uuid4().hex[:8]}"
        self.session = "app"

    def run(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        return done.stdout

    def capture(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.session)

    def wait_for(self, check: Callable[[str], bool], timeout: float, what: str) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.capture()
            if check(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; the pane showed:\n{screen}")

    def start_firsttoken(self, home: Path, base_url: str, *args: str) -> None:
        """`firsttoken --base-url URL ARGS` in a 120x40 pane, with its own FIRSTTOKEN_HOME."""
        command = (
            # COLUMNS/LINES from the test runner would override the pane size inside the app.
            f"cd {REPO} && env -u COLUMNS -u LINES FIRSTTOKEN_HOME={home} "
            f"{sys.executable} -m tui --base-url {base_url} {' '.join(args)}; "
            "sleep 60"  # keep the pane after exit so a failure can still be read
        )
        self.run(
            "new-session", "-d", "-s", self.session, "-x", "120", "-y", "40",
            "-e", f"FIRSTTOKEN_HOME={home}", command,
        )  # fmt: skip
        # A fresh tmux server without clients may fall back to 80x24: pin the size.
        self.run("set-option", "-t", self.session, "window-size", "manual")
        self.run("resize-window", "-t", self.session, "-x", "120", "-y", "40")

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


class TmuxApp(Tmux):
    """The command started with its own FIRSTTOKEN_HOME, every byte it writes recorded."""

    def __init__(self, workdir: Path) -> None:
        super().__init__()
        self.workdir = workdir
        self.raw = workdir / f"{self.socket}.bytes"  # everything the pane received
        self.exit_file = workdir / f"{self.socket}.exit"

    def tmux(self, *args: str) -> str:
        return self.run(*args)

    def start(self, home: Path, *args: str, env: dict[str, str] | None = None) -> None:
        """`python -m tui ARGS` in a 120x40 pane with FIRSTTOKEN_HOME=home; the exit code is
        written to a file, and the pane stays open afterwards."""
        settings = {"FIRSTTOKEN_HOME": str(home), **(env or {})}
        exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in settings.items())
        command = (
            f"cd {REPO} && env -u COLUMNS -u LINES {exports} "
            f"{sys.executable} -m tui {' '.join(shlex.quote(a) for a in args)}; "
            f"echo $? > {self.exit_file}; sleep 120"
        )
        self.tmux(
            "new-session", "-d", "-s", self.session, "-x", "120", "-y", "40", command
        )  # fmt: skip
        self.tmux("set-option", "-t", self.session, "window-size", "manual")
        self.tmux("resize-window", "-t", self.session, "-x", "120", "-y", "40")
        self.tmux("set-option", "-g", "set-clipboard", "on")  # OSC 52 would reach a buffer
        self.tmux("pipe-pane", "-o", "-t", self.session, f"cat >> {self.raw}")

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", self.session, *(["-l"] if literal else []), *keys)

    def app_pid(self) -> int:
        """The firsttoken process: the child of the pane's shell that runs `python -m tui`."""
        shell = int(self.tmux("display-message", "-p", "-t", self.session, "#{pane_pid}"))
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == shell and b"tui" in cmdline:
                return int(entry.name)
        raise AssertionError("firsttoken is not running in the pane")

    def exit_code(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.exit_file.exists() and self.exit_file.read_text().strip():
                return int(self.exit_file.read_text())
            time.sleep(0.1)
        raise AssertionError(f"firsttoken did not end; the pane showed:\n{self.capture()}")

    def pane_state(self) -> dict[str, str]:
        """What the terminal is left in: alternate screen, mouse tracking, cursor, title."""
        names = ("alternate_on", "mouse_any_flag", "mouse_standard_flag", "cursor_flag")
        values = self.tmux(
            "display-message", "-p", "-t", self.session, "|".join(f"#{{{n}}}" for n in names)
        )
        return dict(zip(names, values.strip().split("|"), strict=True))

    def raw_bytes(self) -> bytes:
        return self.raw.read_bytes() if self.raw.exists() else b""

    def kill_server(self) -> None:
        self.kill()
        if self.exit_file.exists():
            os.unlink(self.exit_file)
