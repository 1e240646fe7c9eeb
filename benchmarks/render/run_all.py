"""Reproduce benchmarks/render/README.md's table: every app, both scenarios, medians, one command.

    python -m benchmarks.render.run_all [--short-runs 5] [--long-runs 2]
        [--apps firsttoken,oterm,elia,textual-coalesced,textual-bare,textual-plain]
        [--scenarios short,long,fast]

Peers missing from benchmarks/render/peers/.venvs are installed first. Each app gets one
unmeasured warm-up run (so every measured start finds its bytecode compiled and its files in
the OS cache, as on a machine where the app has been used before); every measured run is
then a fresh process with a fresh HOME, so "first message" really is the first. Prints the
Markdown table, saves the medians as the result `--save NAME` (benchmarks/results/NAME.json,
what `python -m benchmarks.tables` writes into the docs; `render-` and the scenarios by default)
and every run's detail under benchmarks/results/raw/.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from benchmarks.render.apps import ADAPTERS
from benchmarks.render.endpoint import SCENARIOS, EndpointProcess
from benchmarks.render.harness import RunResult, run_many, run_once, summarize
from benchmarks.render.peers.install_peers import PEERS, install
from benchmarks.render.report import notes, table
from benchmarks.results import command_line, raw_path, save, source


def _source() -> dict[str, object]:
    """Which firsttoken was measured: the commit, the files that differed, another tree."""
    return {**source(), "RENDER_FIRSTTOKEN_SRC": os.environ.get("RENDER_FIRSTTOKEN_SRC")}


def _per_run(runs: list[RunResult]) -> list[dict[str, object]]:
    """What the docs show of each run besides the medians (ranges, following to the end)."""
    return [
        {"final_lag_ms": r.final_lag_ms, "cpu_s": r.cpu_s, "followed": r.followed} for r in runs
    ]


def _brief(run: RunResult) -> str:
    shown = asdict(run)
    shown.pop("screen")
    shown.pop("app")
    shown.pop("scenario")
    return ", ".join(
        f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in shown.items()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=",".join(ADAPTERS))
    parser.add_argument("--scenarios", default="short,long,fast")
    parser.add_argument("--short-runs", type=int, default=5)
    parser.add_argument("--long-runs", type=int, default=2)
    parser.add_argument("--no-warm-up", action="store_true")
    parser.add_argument("--save", metavar="NAME", help="the result's name (render-SCENARIOS)")
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

    source_at_start = _source()
    counts = {"short": args.short_runs, "long": args.long_runs, "fast": args.long_runs}
    runs: dict[str, dict[str, list[RunResult]]] = {name: {} for name in apps}
    for scenario in scenarios:
        # Round-robin over the apps, so load from elsewhere on the machine (and any drift)
        # falls on every app alike rather than on whichever ran during a busy spell.
        with (
            tempfile.TemporaryDirectory(prefix="render-endpoint-") as tmp,
            EndpointProcess(SCENARIOS[scenario], Path(tmp) / "requests.jsonl") as endpoint,
        ):
            # Every other scenario is a long reply (the block-dense ones: see dense_reply).
            for i in range(counts.get(scenario, args.long_runs)):
                for name in apps:
                    run = run_once(ADAPTERS[name], SCENARIOS[scenario], endpoint)
                    runs[name].setdefault(scenario, []).append(run)
                    print(f"{scenario} #{i + 1} {name}: {_brief(run)}", flush=True)
    raw = {n: {s: [asdict(r) for r in rs] for s, rs in by.items()} for n, by in runs.items()}
    results = {n: {s: summarize(rs) for s, rs in by.items()} for n, by in runs.items()}

    labels = {name: ADAPTERS[name].label for name in apps}
    text = table(results, labels)
    print()
    print(text)
    extra = notes(results)
    if extra:
        print("\nnotes:\n" + extra)
    name = args.save or "render-" + "-".join(scenarios)
    figures = {
        "apps": labels,
        "scenarios": scenarios,
        "summary": results,
        "per_run": {n: {s: _per_run(rs) for s, rs in by.items()} for n, by in runs.items()},
    }
    save(name, command_line("benchmarks.render.run_all", argv), figures)
    out = raw_path(name)
    out.write_text(
        json.dumps(
            {
                # The tree can move while a long run goes on: both ends are recorded.
                "source": {"start": source_at_start, "end": _source()},
                "scenarios": {s: asdict(SCENARIOS[s]) for s in scenarios},
                "summary": results,
                "runs": raw,
                "table": text,
            },
            indent=2,
        )
    )
    print(f"runs: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
