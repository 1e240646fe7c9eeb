"""Running the real `firsttoken` command in a subprocess, for the command-line tests."""

from __future__ import annotations

import argparse
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


def ask_args(prompt: str | None, **changes: object) -> argparse.Namespace:
    """`ask`'s parsed arguments as the command line leaves them by default, with `changes`."""
    values: dict[str, object] = {
        "prompt": prompt,
        "messages": None,
        "stream": None,
        "trim": None,
        "budget": None,
        "json": False,
    }
    values.update(changes)
    return argparse.Namespace(**values)
