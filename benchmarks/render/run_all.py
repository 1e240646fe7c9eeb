"""Reproduce issue 4's table: every app, both scenarios, medians, one command.

    python -m benchmarks.render.run_all [--apps firsttoken,oterm,elia] [--short-runs 5]
                                        [--long-runs 2] [--scenarios short,long]

Peers missing from benchmarks/render/peers/.venvs are installed first. Each app gets one
unmeasured warm-up run (so every measured start finds its bytecode compiled and its files in
the OS cache, as on a machine where the app has been used before); every measured run is
then a fresh process with a fresh HOME, so "first message" really is the first. Prints the
Markdown table and writes every run to benchmarks/results/render-<UTC time>.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from benchmarks.render.apps import ADAPTERS
from benchmarks.render.endpoint import SCENARIOS
from benchmarks.render.harness import run_many, summarize
from benchmarks.render.peers.install_peers import PEERS, install
from benchmarks.render.report import notes, table

RESULTS = Path(__file__).resolve().parents[1] / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default="firsttoken,oterm,elia")
    parser.add_argument("--scenarios", default="short,long")
    parser.add_argument("--short-runs", type=int, default=5)
    parser.add_argument("--long-runs", type=int, default=2)
    parser.add_argument("--no-warm-up", action="store_true")
    args = parser.parse_args(argv)
    apps = [a for a in args.apps.split(",") if a]
    scenarios = [s for s in args.scenarios.split(",") if s]
    for name in apps:
        if name not in ADAPTERS:
            print(f"run_all: error: unknown app {name!r}; known: {', '.join(ADAPTERS)}")
            return 2
        if name in PEERS and ADAPTERS[name].available():
            install(name)
    for scenario in scenarios:
        if scenario not in SCENARIOS:
            print(f"run_all: error: unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
            return 2

    if not args.no_warm_up:
        for name in apps:
            print(f"warm-up: {name}", flush=True)
            run_many(ADAPTERS[name], SCENARIOS["short"], 1)

    counts = {"short": args.short_runs, "long": args.long_runs}
    raw: dict[str, dict[str, list[dict]]] = {}
    results: dict[str, dict[str, dict]] = {}
    for scenario in scenarios:
        for name in apps:
            print(f"{name} / {scenario} x{counts.get(scenario, 1)}", flush=True)
            runs = run_many(ADAPTERS[name], SCENARIOS[scenario], counts.get(scenario, 1))
            raw.setdefault(name, {})[scenario] = [asdict(r) for r in runs]
            results.setdefault(name, {})[scenario] = summarize(runs)

    labels = {name: ADAPTERS[name].label for name in apps}
    text = table(results, labels)
    print()
    print(text)
    extra = notes(results)
    if extra:
        print("\nnotes:\n" + extra)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / time.strftime("render-%Y%m%dT%H%M%SZ.json", time.gmtime())
    out.write_text(
        json.dumps(
            {
                "scenarios": {s: asdict(SCENARIOS[s]) for s in scenarios},
                "summary": results,
                "runs": raw,
                "table": text,
            },
            indent=2,
        )
    )
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
