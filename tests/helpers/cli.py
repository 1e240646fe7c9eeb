"""Running the real `firsttoken` command in a subprocess, for the command-line tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def firsttoken(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m tui ARGS` from the repository, stdin closed, the test's environment
    (FIRSTTOKEN_HOME points at the test's isolated home)."""
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )
