"""Running a real command with its output on a pseudo-terminal, and checking what reached it."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from helpers.cli import ROOT


def on_a_terminal(argv: list[str], *, shell: bool = False) -> tuple[int, bytes]:
    """Run `python -m tui ARGV` (or, with `shell`, the shell command ARGV[0], e.g. a pipe into
    `cat`) with stdout and stderr on one pseudo-terminal; the exit code and every byte the
    terminal received. NO_COLOR keeps firsttoken's own colours out, so any ESC is the server's."""
    primary, secondary = pty.openpty()
    command = ["sh", "-c", argv[0]] if shell else [sys.executable, "-m", "tui", *argv]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
        env={**os.environ, "NO_COLOR": "1"},
    )
    os.close(secondary)
    output = b""
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not data:
            break
        output += data
    process.wait(timeout=120)
    os.close(primary)
    return process.returncode, output


def controls(data: bytes) -> list[str]:
    """The control characters a UTF-8 terminal would act on (C0 but tab, newline and CR; DEL;
    C1), as the terminal decodes the bytes. A pty turns LF into CRLF, so CR is allowed here."""
    text = data.decode("utf-8", errors="replace")
    return [
        f"U+{ord(c):04X}"
        for c in text
        if (ord(c) < 0x20 and c not in "\n\t\r") or 0x7F <= ord(c) <= 0x9F
    ]
