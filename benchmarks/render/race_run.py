"""Two replies on one screen: firsttoken's race view streaming both targets' replies at once
(`--race demo demo,trim=off --together`, 4,000 tokens at 500 tokens/s each), beside one reply
in the chat and the bare plain-text app's one reply, in the same run, taking turns.

    python -m benchmarks.render.race_run [--runs 3]

Prints, per app, the medians of the app's CPU from Enter to the last reply settled, the bytes
written to the terminal in that time, and each pane's final render lag (the endpoint's last
token of that reply to its last words on screen); then the race against one reply (target:
CPU at most 1.6×, bytes at most 2×, final lag at most 100 ms per pane) and the race's bytes
against the plain-text app's.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchmarks.render.apps import ADAPTERS, AppAdapter, Launch
from benchmarks.render.endpoint import SCENARIOS, EndpointProcess
from benchmarks.render.harness import IDLE_BEFORE_TYPING_S, READY_TIMEOUT_S, SETTLE_S, run_once
from benchmarks.render.measures import read_request_log, tree_cpu_seconds
from benchmarks.render.pty_driver import PtyApp, terminal_env
from benchmarks.render.replay import final_marker, replay
from benchmarks.render.screen_watch import Predicate, ScreenWatcher, has_text, normalize
from benchmarks.results import command_line, save

SCENARIO = SCENARIOS["long"]
TARGETS = ("demo", "demo,trim=off")
DIVIDER = 58  # the column between the two panes at 120 columns


@dataclass
class RaceRun:
    cpu_s: float | None = None
    bytes_written: int | None = None
    lags_ms: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _race_adapter() -> AppAdapter:
    plain = ADAPTERS["firsttoken"]

    def prepare(home: Path, base_url: str) -> Launch:
        launch = plain.prepare(home, base_url)
        return replace(launch, argv=[*launch.argv, "--race", *TARGETS, "--together"])

    return replace(plain, name="firsttoken-race", prepare=prepare,
                   ready=has_text("message to every target"))  # fmt: skip


def _entries(log: Path, after: float, count: int, timeout_s: float) -> list[dict]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = [
            e for e in read_request_log(log, wait_s=0)
            if "chat/completions" in str(e.get("path", "")) and e.get("received_at", 0) >= after
            and e.get("done_at") is not None
        ]  # fmt: skip
        if len(done) >= count:
            return sorted(done, key=lambda e: e["last_token_at"])[:count]
        time.sleep(0.05)
    return []


_FRAME = re.compile(r"[│╭╮╰╯─▏▕▁▂▃▄▅▆▇█▉▊▋▌▍▎▐▔]")


def _panes_showing(phrase: str, lines: list[str], divider: int) -> int:
    """How many of the two panes hold `phrase`, read across their wrapped lines (a narrow
    pane wraps the reply's last words onto two lines)."""
    wanted = normalize(phrase)
    found = 0
    for pane in (slice(0, divider), slice(divider + 1, None)):
        text = " ".join(_FRAME.sub(" ", line[pane]) for line in lines)
        found += wanted in normalize(text)
    return found


def _shown(phrase: str, times: int) -> Predicate:
    return lambda lines: _panes_showing(phrase, lines, DIVIDER) >= times


PANES = (slice(0, DIVIDER), slice(DIVIDER + 1, None))


def _reply_rows(lines: list[str] | tuple[str, ...]) -> range:
    """The rows the replies stream into: below the lanes' header rule, above the prompt."""
    top = next((r for r, line in enumerate(lines) if line.startswith("────")), 0) + 1
    bottom = next((r for r, line in enumerate(lines) if "message to every target" in line),
                  len(lines))  # fmt: skip
    return range(top, bottom)


def _last_rows(lines: list[str] | tuple[str, ...], pane: slice, count: int = 4) -> tuple[str, ...]:
    """The pane's last `count` rows of reply text, wherever they are: the scoreboard's rows
    appear above the lanes when the round ends and move them down a row, which is not a
    change of what the reply shows."""
    texts = [lines[r][pane] for r in _reply_rows(lines)]
    # Frame and scrollbar cells out: the scrollbar's thumb moves as the chat grows.
    kept = [" ".join(_FRAME.sub(" ", t).split()) for t in texts if "╰" not in t]
    return tuple([t for t in kept if t][-count:])


def _final_start(watcher: ScreenWatcher, pane: slice) -> float | None:
    """When the pane's last rows of reply text first read as they do now, in the final
    unbroken run of recorded screens (the bottom border's figures excepted: they come with
    the record)."""
    want = _last_rows(watcher.lines(), pane)
    start = None
    for at, lines in reversed(list(watcher.history)):
        if _last_rows(lines, pane) != want:
            break
        start = at
    return start


def race_once(endpoint: EndpointProcess) -> RaceRun:
    run = RaceRun()
    adapter = _race_adapter()
    with tempfile.TemporaryDirectory(prefix="render-race-") as tmp:
        launch = adapter.prepare(Path(tmp), endpoint.base_url)
        app = PtyApp(launch.argv, terminal_env(os.environ, launch.env), cwd=tmp)
        watcher = ScreenWatcher(app.chunks, answer=app.write)
        try:
            if watcher.wait_for(adapter.ready, READY_TIMEOUT_S) is None:
                run.notes.append("race screen not ready")
                return run
            time.sleep(IDLE_BEFORE_TYPING_S)
            app.type_text(SCENARIO.prompt(), 0.0)
            time.sleep(0.5)
            watcher.start_history()
            cpu_before = tree_cpu_seconds(app.pid)
            enter_at = app.write("\r")
            entries = _entries(endpoint.log_path, enter_at - 0.001, 2, SCENARIO.final_timeout_s)
            if len(entries) < 2:
                run.notes.append("the endpoint logged fewer than two replies")
                return run
            phrase, _ = final_marker(replay(endpoint.base_url, entries[-1]))
            if watcher.wait_for(_shown(phrase, 2), 60.0) is None:
                run.notes.append(f"final words {phrase!r} not in both panes")
                return run
            time.sleep(SETTLE_S)
            ends = sorted(entry["last_token_at"] for entry in entries)
            for pane in PANES:
                start = _final_start(watcher, pane)
                if start is None:
                    run.notes.append("a pane's final rows never settled")
                    return run
                sent = max((end for end in ends if end <= start), default=ends[0])
                run.lags_ms.append((start - sent) * 1000)
            run.cpu_s = tree_cpu_seconds(app.pid) - cpu_before
            run.bytes_written = watcher.bytes_between(enter_at, time.perf_counter())
        finally:
            app.stop()
    return run


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    races: list[RaceRun] = []
    singles: dict[str, list] = {"firsttoken": [], "textual-plain": []}
    with (
        tempfile.TemporaryDirectory() as tmp,
        EndpointProcess(SCENARIO, Path(tmp) / "requests.jsonl") as endpoint,
    ):
        for number in range(args.runs):  # taking turns, so the machine's drift hits all
            for name in singles:
                singles[name].append(run_once(ADAPTERS[name], SCENARIO, endpoint))
            races.append(race_once(endpoint))
            print(f"run {number + 1}: race {races[-1]}", flush=True)
    one = {
        name: {
            "cpu": _median([r.cpu_s for r in runs if r.cpu_s is not None]),
            "bytes": _median([r.bytes_written for r in runs if r.bytes_written is not None]),
            "lag": _median([r.final_lag_ms for r in runs if r.final_lag_ms is not None]),
        }
        for name, runs in singles.items()
    }
    race_cpu = _median([r.cpu_s for r in races if r.cpu_s is not None])
    race_bytes = _median([r.bytes_written for r in races if r.bytes_written is not None])
    lag_first = _median([r.lags_ms[0] for r in races if len(r.lags_ms) == 2])
    lag_second = _median([r.lags_ms[1] for r in races if len(r.lags_ms) == 2])
    print(f"\n4,000 tokens at 500 tok/s, medians of {args.runs}; load {os.getloadavg()[0]:.2f}")
    for name, figures in one.items():
        print(f"{name}, one reply: CPU {figures['cpu']:.2f} s, {figures['bytes'] / 1000:,.0f} KB, "
              f"final lag {figures['lag']:.0f} ms")  # fmt: skip
    if race_cpu is None or race_bytes is None or lag_first is None or lag_second is None:
        print("race: not measured:", sorted({n for r in races for n in r.notes}))
        return 1
    mine = one["firsttoken"]
    print(
        f"firsttoken race, two replies at once: CPU {race_cpu:.2f} s, "
        f"{race_bytes / 1000:,.0f} KB, final lag {lag_first:.0f} ms and {lag_second:.0f} ms"
    )
    print(f"race / one reply: CPU {race_cpu / mine['cpu']:.2f}x (target <= 1.6x), bytes "
          f"{race_bytes / mine['bytes']:.2f}x (target <= 2x); race bytes / plain-text app's one "
          f"reply: {race_bytes / one['textual-plain']['bytes']:.2f}x")  # fmt: skip
    race = {"cpu": race_cpu, "bytes": race_bytes, "lags_ms": [lag_first, lag_second]}
    per_run = [{"cpu_s": r.cpu_s, "bytes": r.bytes_written, "lags_ms": r.lags_ms} for r in races]
    figures = {"runs": args.runs, "race": race, "one_reply": one, "race_runs": per_run}
    save("render-race", command_line("benchmarks.render.race_run"), figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
