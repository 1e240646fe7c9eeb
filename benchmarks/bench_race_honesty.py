"""How far a race's TTFTs are from the server's own clock, one at a time and together.

    python -m benchmarks.bench_race_honesty [--rounds 10]

Runs `firsttoken race` (a subprocess) against the demo endpoint in this process, whose log
stamps each request's arrival and first token with perf_counter, the same monotonic clock on
Linux as the command's. For every request: the client's TTFT minus the server's own
arrival-to-first-token time (what the network, the client's send and its receipt add). With
--together both targets' streams arrive at once; a lane's rendering never delays another's
timestamps, so the excess must stay as small as one at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

from tui.demo import start_demo_in_thread
from tui.demo.latency_model import latency_model

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("demo-h100-70b", "demo-cpu-small")
PROMPT = "Reply 30 tokens. " + " ".join(f"word{i}" for i in range(200))


def excess_ms(rounds: int, together: bool) -> list[float]:
    demo = start_demo_in_thread(latency_model("instant"))
    try:
        with tempfile.TemporaryDirectory() as home:
            args = [sys.executable, "-m", "tui", "race", *TARGETS, "--rounds", str(rounds),
                    "--prompt", PROMPT, "--json", "--base-url", demo.base_url]  # fmt: skip
            if together:
                args.append("--together")
            done = subprocess.run(
                args, cwd=ROOT, capture_output=True, text=True, check=True,
                env={**os.environ, "FIRSTTOKEN_HOME": home},
            )  # fmt: skip
        payload = json.loads(done.stdout)
        client = {t["label"]: t["ttft_ms_runs"] for t in payload["targets"]}
        server: dict[str, list[float]] = {label: [] for label in TARGETS}
        for entry in demo.requests:
            gap = (entry["first_token_at"] - entry["received_at"]) * 1000
            server[entry["model"]].append(gap)
        return [
            c - s for label in TARGETS for c, s in zip(client[label], server[label], strict=True)
        ]
    finally:
        demo.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    for together in (False, True):
        values = excess_ms(args.rounds, together)
        mode = "together  " if together else "one at a time"
        print(
            f"{mode}: client TTFT - server's own, over {len(values)} requests: "
            f"median {median(values):.2f} ms, max {max(values):.2f} ms, min {min(values):.2f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
