"""Startup time of `firsttoken --version` (target: <= 300 ms at the median).

Runs the installed console script N times as a fresh process and prints median / p90 / min.
    python benchmarks/bench_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time

TARGET_MS = 300.0


def time_once(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    script = shutil.which("firsttoken")
    command = [script, "--version"] if script else [sys.executable, "-m", "tui", "--version"]
    time_once(command)  # warm the OS file cache once; users start from a warm disk too
    samples = sorted(time_once(command) for _ in range(args.runs))
    median = statistics.median(samples)
    p90 = samples[int(0.9 * (len(samples) - 1))]
    print(f"command: {' '.join(command)}")
    print(f"runs: {args.runs}  median: {median:.1f} ms  p90: {p90:.1f} ms", end="")
    print(f"  min: {samples[0]:.1f} ms")
    print(f"target: <= {TARGET_MS:.0f} ms  ratio median/target: {median / TARGET_MS:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
