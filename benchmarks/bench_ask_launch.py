"""How soon `firsttoken ask` sends: launch -> the request received by the server (target: <= 300 ms
at the median on this project's 2-core machine).

The demo endpoint runs in another process with its request log on (`--log`); each run starts a
fresh `firsttoken ask` process against it, and the figure is the server's own receive stamp
minus the moment just before the process was spawned. Both are `time.perf_counter()`, which on
Linux is CLOCK_MONOTONIC, one clock for every process. Each prompt carries a tag of its own, so
every log entry is matched to its run.

    python -m benchmarks.bench_ask_launch [--runs 15] [--src DIR [--src DIR ...]]

With several --src trees (checkouts of firsttoken), they take turns run by run (the order
reversed every other round), so load on a shared machine hits them alike. The figures are saved
as the `ask-launch` result (benchmarks/results.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks.demo_process import base_url_of
from benchmarks.results import command_line, save

ROOT = Path(__file__).resolve().parent.parent
TARGET_MS = 300.0


def start_server(log: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tui",
            "demo-server",
            "--port",
            "0",
            "--preset",
            "instant",
            "--log",
            str(log),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT)),
    )
    return process, base_url_of(process)


def log_entry(log: Path, tag: str) -> dict[str, Any]:
    for _ in range(200):
        for line in log.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if tag in json.dumps(entry.get("messages", [])):
                return entry
        time.sleep(0.01)
    raise SystemExit(f"the server logged no request tagged {tag}")


def isolated_env(src: Path, home: Path) -> dict[str, str]:
    """A user's environment with an empty home: the real config lookup (platformdirs), no
    FIRSTTOKEN_HOME shortcut, nothing of the developer's own config or keys."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIRSTTOKEN_", "XDG_"))}
    env.update(PYTHONPATH=str(src), HOME=str(home))
    return env


def launch_once(src: Path, base_url: str, log: Path, home: Path) -> tuple[float, float]:
    """(launch -> received, launch -> exit) in ms for one fresh `firsttoken ask`."""
    tag = uuid.uuid4().hex[:8]
    command = [sys.executable, "-m", "tui", "ask", "--base-url", base_url, "--model", "bench"]
    command.append(f"[launch {tag}] hello, reply 3 tokens")
    env = isolated_env(src, home)
    # As installed: compiled modules cached (pip compiles them; a first run writes them here).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    launched = time.perf_counter()
    result = subprocess.run(command, cwd=src, env=env, capture_output=True, text=True)
    exited = time.perf_counter()
    if result.returncode != 0:
        raise SystemExit(f"ask failed ({src}): {result.stderr.strip()}")
    entry = log_entry(log, tag)
    return (entry["received_at"] - launched) * 1000.0, (exited - launched) * 1000.0


def spread(samples: list[float]) -> dict[str, float]:
    """Median, p90 and min, ms."""
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered), 1),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 1),
        "min_ms": round(ordered[0], 1),
    }


def describe(samples: list[float]) -> str:
    s = spread(samples)
    return f"median {s['median_ms']:6.1f} ms  p90 {s['p90_ms']:6.1f} ms  min {s['min_ms']:6.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--src", type=Path, action="append", default=None)
    options = parser.parse_args()
    trees = [path.resolve() for path in (options.src or [ROOT])]
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "requests.jsonl"
        home = Path(folder) / "home"
        process, base_url = start_server(log)
        try:
            for tree in trees:  # one discarded run each: the OS file cache, .pyc files
                launch_once(tree, base_url, log, home)
            sent: dict[Path, list[float]] = {tree: [] for tree in trees}
            done: dict[Path, list[float]] = {tree: [] for tree in trees}
            for run in range(options.runs):
                order = trees if run % 2 == 0 else list(reversed(trees))
                for tree in order:
                    received, exited = launch_once(tree, base_url, log, home)
                    sent[tree].append(received)
                    done[tree].append(exited)
        finally:
            process.terminate()
            process.wait(timeout=10)
    load = os.getloadavg()[0]
    print(
        f"firsttoken ask: launch -> request received by the server, {options.runs} runs, "
        f"load {load:.1f}"
    )
    for tree in trees:
        median = statistics.median(sent[tree])
        print(f"  {tree}")
        ratio = median / TARGET_MS
        print(f"    received: {describe(sent[tree])}   ratio median/target {ratio:.2f}")
        print(f"    exited:   {describe(done[tree])}")
    figures: dict[str, Any] = {
        "runs": options.runs,
        "load_1min": round(load, 2),
        "target_ms": TARGET_MS,
        "trees": [
            {
                "src": str(tree),
                "received": spread(sent[tree]),
                "exited": spread(done[tree]),
                "ratio_median_to_target": round(statistics.median(sent[tree]) / TARGET_MS, 2),
            }
            for tree in trees
        ],
    }
    names = [tree.name for tree in trees]
    if len(set(names)) < len(names):
        names = [str(tree) for tree in trees]
    parts = []
    for name, row in zip(names, figures["trees"], strict=True):
        received = row["received"]
        named = f"{name}: " if options.src else ""
        parts.append(
            f"{named}{received['median_ms']:,.0f} ms median, p90 {received['p90_ms']:,.0f} ms"
        )
    each = " each, taking turns," if len(trees) > 1 else ""
    plural = "es" if options.runs != 1 else ""
    figures["measured"] = (
        "; ".join(parts) + f" ({options.runs} fresh process{plural}{each} at a load of {load:.1f})"
    ).replace("|", "/")
    save("ask-launch", command_line("benchmarks.bench_ask_launch"), figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
