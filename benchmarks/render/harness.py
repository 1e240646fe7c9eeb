"""One measured run: start an app on a pty, wait until ready, send a prompt, time the reply.

Timeline (all time.perf_counter(), the same clock as the endpoint's request log):
  start  -> ready        the app's prompt is on the emulated screen
  Enter  -> received_at  the endpoint got the request
  first_token_at + 1 token interval -> the reply's first visible word is on screen
  last_token_at -> the reply's last words are on screen where they finally stay
CPU (user+sys of the app's process tree) and bytes written to the terminal cover Enter to
SETTLE_S after the final text (so trailing work such as a final re-render counts).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks.render.apps import ADAPTERS, AppAdapter
from benchmarks.render.endpoint import SCENARIOS, EndpointProcess, Scenario
from benchmarks.render.measures import CpuSampler, read_request_log, tree_cpu_seconds
from benchmarks.render.pty_driver import PtyApp, terminal_env
from benchmarks.render.replay import (
    FIRST_VISIBLE_TOKEN_INDEX,
    FIRST_VISIBLE_WORD,
    final_marker,
    replay,
)
from benchmarks.render.screen_watch import ScreenWatcher, Watch, has_text

READY_TIMEOUT_S = 60.0
IDLE_BEFORE_TYPING_S = 1.5  # let start-up work (update checks, model listing) finish
SETTLE_S = 1.0


@dataclass
class RunResult:
    app: str
    scenario: str
    ready_s: float | None = None
    enter_to_request_ms: float | None = None
    first_token_ms: float | None = None
    final_lag_ms: float | None = None
    cpu_s: float | None = None  # Enter -> SETTLE_S after the final text
    cpu_reply_s: float | None = None  # request received -> the same end (no send-path work)
    bytes_written: int | None = None
    output_tokens: int | None = None
    followed: bool | None = None
    notes: list[str] = field(default_factory=list)
    # 1-minute load average around the run: other work on the machine skews timings.
    load_before: float | None = None
    load_after: float | None = None
    screen: str = ""  # the emulated screen at the end, as evidence


def _new_line_with(word: str, before: list[str]):
    """True once a line holding `word` shows up that was not on the screen before Enter.

    A header or a notification that already names the word stays as it was, so only the
    reply's own text can fire it.
    """
    seen = set(before)

    def check(lines: list[str]) -> bool:
        return any(word in line and line not in seen for line in lines)

    return check


def _chat_entries(log: Path, after: float) -> list[dict]:
    return [
        e
        for e in read_request_log(log, wait_s=0)
        if "chat/completions" in str(e.get("path", "")) and e.get("received_at", 0) >= after
    ]


def _wait_entry(log: Path, after: float, timeout_s: float) -> dict | None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        entries = _chat_entries(log, after)
        if entries:
            return entries[0]
        time.sleep(0.05)
    return None


def run_once(adapter: AppAdapter, scenario: Scenario, endpoint: EndpointProcess) -> RunResult:
    result = RunResult(adapter.name, scenario.name)
    with tempfile.TemporaryDirectory(prefix=f"render-{adapter.name}-") as tmp:
        home = Path(tmp)
        launch = adapter.prepare(home, endpoint.base_url)
        app = PtyApp(launch.argv, terminal_env(os.environ, launch.env), cwd=str(home))
        watcher = ScreenWatcher(app.chunks, answer=app.write)
        result.load_before = os.getloadavg()[0]
        try:
            _drive(adapter, scenario, endpoint, app, watcher, result)
        finally:
            result.screen = watcher.text()
            result.load_after = os.getloadavg()[0]
            app.stop()
    return result


def _drive(
    adapter: AppAdapter,
    scenario: Scenario,
    endpoint: EndpointProcess,
    app: PtyApp,
    watcher: ScreenWatcher,
    result: RunResult,
) -> None:
    ready_at = watcher.wait_for(adapter.ready, READY_TIMEOUT_S)
    if ready_at is None:
        result.notes.append(f"not ready within {READY_TIMEOUT_S:.0f} s")
        return
    result.ready_s = ready_at - app.started_at
    time.sleep(IDLE_BEFORE_TYPING_S)

    app.type_text(scenario.prompt(), adapter.per_key_s)
    time.sleep(0.5)  # the typed prompt is echoed and idle again before Enter
    first = watcher.watch(_new_line_with(FIRST_VISIBLE_WORD, watcher.lines()))
    watcher.start_history()
    sampler = CpuSampler(app.pid)
    cpu_before = tree_cpu_seconds(app.pid)
    enter_at = app.write(adapter.send_key)
    try:
        _reply(scenario, endpoint, watcher, first, result, enter_at, cpu_before, sampler)
    finally:
        sampler.stop()


def _reply(
    scenario: Scenario,
    endpoint: EndpointProcess,
    watcher: ScreenWatcher,
    first: Watch,
    result: RunResult,
    enter_at: float,
    cpu_before: float,
    sampler: CpuSampler,
) -> None:

    first_at = watcher.wait(first, 60.0)
    entry = _wait_entry(endpoint.log_path, enter_at - 0.001, scenario.final_timeout_s)
    if entry is None:
        result.notes.append("the endpoint logged no chat request")
        return
    result.output_tokens = entry.get("output_tokens")
    if result.output_tokens != scenario.reply_tokens:
        result.notes.append(
            f"reply had {result.output_tokens} tokens, not {scenario.reply_tokens} "
            f"(max_tokens sent: {entry.get('max_tokens')})"
        )
    result.enter_to_request_ms = (entry["received_at"] - enter_at) * 1000
    if first_at is not None and entry.get("first_token_at") is not None:
        # The first visible word is token 1; the server sends token i at first + i/rate.
        sent = entry["first_token_at"] + FIRST_VISIBLE_TOKEN_INDEX / scenario.decode_tokens_per_s
        result.first_token_ms = (first_at - sent) * 1000
    else:
        result.notes.append("first reply word never appeared")

    reply = replay(endpoint.base_url, entry)
    phrase, last_word = final_marker(reply)
    remaining = max(5.0, scenario.final_timeout_s - (time.perf_counter() - entry["done_at"]))
    live = watcher.wait_for(has_text(phrase), remaining)
    time.sleep(SETTLE_S)
    cpu_end = tree_cpu_seconds(sampler.pid)
    result.cpu_s = cpu_end - cpu_before
    at_request = sampler.at(entry["received_at"])
    if at_request is not None:
        result.cpu_reply_s = cpu_end - at_request
    end_at = time.perf_counter()
    result.bytes_written = watcher.bytes_between(enter_at, end_at)
    if live is None:
        result.followed = False
        result.notes.append(f"final words {phrase!r} not on screen {remaining:.0f} s after done")
        return
    final_at, why = watcher.final_appearance(phrase, last_word, entry["last_token_at"])
    if why:
        result.notes.append(why)
    result.followed = final_at is not None
    if final_at is not None:
        result.final_lag_ms = (final_at - entry["last_token_at"]) * 1000
    _trace_marks(enter_at, entry, first_at, final_at, watcher.log)


def _trace_marks(
    enter_at: float,
    entry: dict,
    first_at: float | None,
    final_at: float | None,
    chunks: list[tuple[float, int]],
) -> None:
    """With RENDER_TRACE set (profile_app.py), the harness's own marks join the app's trace:
    Enter, the endpoint's stamps and the screen times, all on the same clock."""
    path = os.environ.get("RENDER_TRACE")
    if not path:
        return
    marks = [("enter", enter_at), ("first-on-screen", first_at), ("final-on-screen", final_at)]
    marks += [(f"endpoint-{key}", entry.get(key)) for key in STAMP_KEYS]
    with open(path, "a") as out:
        for kind, at in marks:
            if at is not None:
                out.write(json.dumps({"t": at, "kind": kind}) + "\n")
        for at, size in list(chunks):  # what the terminal received, and when
            if at >= enter_at:
                out.write(json.dumps({"t": at, "kind": "bytes", "n": size}) + "\n")


STAMP_KEYS = ("received_at", "first_token_at", "last_token_at", "done_at")


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def summarize(runs: list[RunResult]) -> dict:
    keys = (
        "ready_s",
        "enter_to_request_ms",
        "first_token_ms",
        "final_lag_ms",
        "cpu_s",
        "cpu_reply_s",
        "bytes_written",
    )
    summary: dict = {k: median([getattr(r, k) for r in runs]) for k in keys}
    summary["enter_to_request_ms_first_run"] = runs[0].enter_to_request_ms if runs else None
    summary["runs"] = len(runs)
    summary["load_median"] = median([r.load_before for r in runs])
    summary["followed_all"] = all(r.followed for r in runs)
    summary["notes"] = sorted({n for r in runs for n in r.notes})
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="one app, one scenario, N runs")
    parser.add_argument("--app", default="firsttoken", choices=sorted(ADAPTERS))
    parser.add_argument("--scenario", default="short", choices=sorted(SCENARIOS))
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--show", action="store_true", help="print the final screen of each run")
    args = parser.parse_args(argv)
    adapter = ADAPTERS[args.app]
    why = adapter.available()
    if why:
        print(f"harness: error: {why}", file=sys.stderr)
        return 2
    scenario = SCENARIOS[args.scenario]
    runs = run_many(adapter, scenario, args.runs, show=args.show)
    print(summarize(runs))
    return 0


def run_many(
    adapter: AppAdapter, scenario: Scenario, n: int, show: bool = False
) -> list[RunResult]:
    """N fresh starts of the app against one endpoint process for the scenario."""
    runs: list[RunResult] = []
    with (
        tempfile.TemporaryDirectory(prefix="render-endpoint-") as tmp,
        EndpointProcess(scenario, Path(tmp) / "requests.jsonl") as endpoint,
    ):
        for _ in range(n):
            run = run_once(adapter, scenario, endpoint)
            runs.append(run)
            shown = {k: v for k, v in asdict(run).items() if k != "screen"}
            print(shown, flush=True)
            if show:
                print(run.screen)
    return runs


if __name__ == "__main__":
    sys.exit(main())
