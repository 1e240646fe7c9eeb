"""Where benchmarks keep what they measured, for `python -m benchmarks.tables` to write into the
README and docs/performance.md.

Each benchmark saves its latest result as `benchmarks/results/<name>.json` (kept in git, small:
the figures, the command, which tree was measured and how loaded the machine was); bulky
per-run detail goes under `benchmarks/results/raw/` (not kept). FIRSTTOKEN_BENCH_RESULTS points
both somewhere else, e.g. for a trial run that must not replace the published figures.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KEPT = ROOT / "benchmarks" / "results"


def results_dir() -> Path:
    """The folder results go to (FIRSTTOKEN_BENCH_RESULTS, else benchmarks/results)."""
    chosen = os.environ.get("FIRSTTOKEN_BENCH_RESULTS")
    return Path(chosen) if chosen else KEPT


def source() -> dict[str, Any]:
    """Which firsttoken was measured: the commit, and the files under tui/ that differed."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip()

    return {
        "commit": git("rev-parse", "HEAD"),
        "modified": git("status", "--porcelain", "--", "tui").splitlines(),
    }


def machine() -> dict[str, Any]:
    """What the figures depend on besides the code: cores and the load when the run ended."""
    return {"cpus": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 2)}


def command_line(module: str, argv: Sequence[str] | None = None) -> str:
    """The command that reproduces a run: `python -m MODULE` and the arguments given."""
    given = list(sys.argv[1:] if argv is None else argv)
    return " ".join(["python", "-m", module, *map(shlex.quote, given)])


def save(name: str, command: str, figures: Mapping[str, Any]) -> Path:
    """Write `figures` as the latest result called `name`; the path written."""
    folder = results_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    payload = {
        "name": name,
        "command": command,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "source": source(),
        "machine": machine(),
        "figures": dict(figures),
    }
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"result saved: {path}")
    return path


def raw_path(name: str) -> Path:
    """A file for a run's bulky detail (one per run, never published)."""
    folder = results_dir() / "raw"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / time.strftime(f"{name}-%Y%m%dT%H%M%SZ.json", time.gmtime())


def load(name: str, folder: Path | None = None) -> dict[str, Any] | None:
    """The latest result called `name`, or None when none was saved."""
    path = (folder or results_dir()) / f"{name}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def signed_ms(value: float, digits: int = 2) -> str:
    """`+0.91 ms`, `−4.4 ms` (a true minus sign, as the docs print it), `0.00 ms` unsigned."""
    text = f"{abs(value):,.{digits}f} ms"
    if text.strip("0.ms ") == "":
        return text
    return ("−" if value < 0 else "+") + text
