"""Startup time of `firsttoken --version` (target: <= 300 ms at the median).

Runs the installed console script N times as a fresh process and prints median / p90 / min;
saves them as the `startup` result (benchmarks/results.py).
    python -m benchmarks.bench_startup [--runs 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.results import command_line, save

TARGET_MS = 300.0


def time_once(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000.0


def counted_runs(count: int) -> str:
    return f"{count} run" + ("s" if count != 1 else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    # The console script on PATH, else the one beside this interpreter (a venv not activated).
    beside = Path(sys.executable).with_name("firsttoken")
    script = shutil.which("firsttoken") or (str(beside) if beside.is_file() else None)
    command = [script, "--version"] if script else [sys.executable, "-m", "tui", "--version"]
    time_once(command)  # warm the OS file cache once; users start from a warm disk too
    samples = sorted(time_once(command) for _ in range(args.runs))
    median = statistics.median(samples)
    p90 = samples[int(0.9 * (len(samples) - 1))]
    print(f"command: {' '.join(command)}")
    print(f"runs: {args.runs}  median: {median:.1f} ms  p90: {p90:.1f} ms", end="")
    print(f"  min: {samples[0]:.1f} ms")
    print(f"target: <= {TARGET_MS:.0f} ms  ratio median/target: {median / TARGET_MS:.2f}")
    timed = "firsttoken --version" if script else "python -m tui --version"
    how = "" if script else f", as {timed}"
    figures = {
        "timed": timed,
        "runs": args.runs,
        "median_ms": round(median, 1),
        "p90_ms": round(p90, 1),
        "min_ms": round(samples[0], 1),
        "target_ms": TARGET_MS,
        "ratio_median_to_target": round(median / TARGET_MS, 2),
        "measured": f"{median:,.0f} ms median (p90 {p90:,.0f} ms, {counted_runs(args.runs)}{how})",
    }
    save("startup", command_line("benchmarks.bench_startup"), figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
