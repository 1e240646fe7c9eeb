"""The results tables of the README and docs/performance.md, written from benchmarks/results/.

    python -m benchmarks.tables          # rewrite every table from the saved results
    python -m benchmarks.tables --check  # exit 1 naming each table that differs

A table sits between `<!-- table NAME: python -m benchmarks.tables -->` and `<!-- /table -->`
in its document; everything between the two marks is generated (the command that measured it,
the table, a line on the runs), so a figure changes only when a benchmark is run again.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.render.report import TARGETS, kilobytes, ms, number, seconds, table
from benchmarks.results import KEPT, ROOT, load

Results = Callable[[str], "dict[str, Any] | None"]
MARK = re.compile(
    r"(<!-- table (?P<name>[\w-]+): python -m benchmarks\.tables -->\n)"
    r"(?P<body>.*?)(<!-- /table -->)",
    re.S,
)
NOT_MEASURED = "not measured yet"


def lag(summary: Mapping[str, Any]) -> str:
    v = number(summary.get("final_lag_ms"))
    text = "–" if v is None else f"+{v:,.0f} ms"
    return text if summary.get("followed_all") else text + " (did not follow to the end)"


def command_block(result: Mapping[str, Any]) -> str:
    return f"```\n{result['command']}\n```\n"


def machine_line(result: Mapping[str, Any]) -> str:
    m = result.get("machine") or {}
    return f"{m.get('cpus', '?')} cores, load {m.get('load_1min', '?')} at the end of the run"


# --- the render benchmark beside oterm, elia and the bare apps (README) ---------------------

RenderRow = tuple[str, str, str, Callable[[Mapping[str, Any]], str]]
RENDER_ROWS: list[RenderRow] = [
    ("app ready after start", "short", "ready", lambda s: seconds(s.get("ready_s"))),
    ("Enter → request reaches the server", "short", "enter",
     lambda s: ms(s.get("enter_to_request_ms"))),
    ("first token on screen after the server sent it", "short", "first",
     lambda s: ms(s.get("first_token_ms"))),
    ("final render lag, 60-token reply", "short", "final_short",
     lambda s: ms(s.get("final_lag_ms"))),
    ("app CPU, 60-token reply", "short", "cpu_short", lambda s: seconds(s.get("cpu_s"))),
    ("bytes written, 60-token reply", "short", "bytes_short",
     lambda s: kilobytes(s.get("bytes_written"))),
    ("4,000 tokens at 500 tok/s: final render lag", "long", "final_long", lag),
    ("same: app CPU", "long", "cpu_long", lambda s: seconds(s.get("cpu_s"), 1)),
    ("4,000 tokens at 2,000 tok/s: final render lag", "fast", "final_fast", lag),
    ("same: app CPU", "fast", "cpu_fast", lambda s: seconds(s.get("cpu_s"), 1)),
]  # fmt: skip
TARGET_WORDS = {"final_long": "≤ 100 ms", "cpu_fast": "beside the bare apps"}


def render_table(result: Mapping[str, Any]) -> str:
    figures = result["figures"]
    apps: Mapping[str, str] = figures["apps"]
    summary: Mapping[str, Mapping[str, Any]] = figures["summary"]
    lines = [
        "| measure | " + " | ".join(apps.values()) + " | target |",
        "|---" * (len(apps) + 2) + "|",
    ]
    for label, scenario, target, cell in RENDER_ROWS:
        if scenario not in figures["scenarios"]:
            continue
        cells = []
        for app in apps:
            shown = cell(summary[app][scenario]) if scenario in summary.get(app, {}) else "–"
            cells.append(f"**{shown}**" if app == "firsttoken" else shown)
        target_words = TARGET_WORDS.get(target, TARGETS[target])
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {target_words} |")
    return command_block(result) + "\n" + "\n".join(lines) + f"\n\n{_runs_line(result)}\n"


def render_full_table(result: Mapping[str, Any]) -> str:
    """run_all's own table: every row, CPU from Enter and (in brackets) from the request."""
    figures = result["figures"]
    return (
        command_block(result)
        + "\n"
        + table(figures["summary"], figures["apps"])
        + f"\n\n{_runs_line(result)}\n"
    )


RATIO_ROWS = [
    ("app ready after start", "short", "ready_s"),
    ("Enter → request", "short", "enter_to_request_ms"),
    ("first token on screen", "short", "first_token_ms"),
    ("final render lag, 60-token reply", "short", "final_lag_ms"),
    ("app CPU, 60-token reply", "short", "cpu_s"),
    ("bytes, 60-token reply", "short", "bytes_written"),
    ("4,000 tokens at 500 tok/s: final render lag", "long", "final_lag_ms"),
    ("same: app CPU", "long", "cpu_s"),
]


def _ratio_cell(value: float) -> str:
    if value >= 10:
        return f"{value:,.0f}"
    return f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def ratios_table(result: Mapping[str, Any]) -> str:
    """Each app's figures over the bare plain-text app's in the same run."""
    figures = result["figures"]
    apps: Mapping[str, str] = figures["apps"]
    summary = figures["summary"]
    base = summary.get("textual-plain")
    if base is None:
        return "The plain-text app was not in this run: no ratios.\n"
    header = "| measure | " + " | ".join(apps.values()) + " |"
    lines = [header, "|---" * (len(apps) + 1) + "|"]
    for label, scenario, key in RATIO_ROWS:
        if scenario not in base:
            continue
        plain = number(base[scenario].get(key))
        cells = []
        for app in apps:
            value = number(summary.get(app, {}).get(scenario, {}).get(key))
            cells.append(_ratio_cell(value / plain) if value is not None and plain else "–")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _runs_line(result: Mapping[str, Any]) -> str:
    figures = result["figures"]
    first = next(iter(figures["apps"]))
    runs = {s: figures["summary"][first][s]["runs"] for s in figures["scenarios"]}
    counts = ", ".join(f"{n} {s}" for s, n in runs.items())
    return f"Medians of {counts} runs per app ({machine_line(result)})."


# --- block-dense replies beside prose (README) -----------------------------------------------

DENSE_KINDS = {
    "prose": "prose",
    "code20": "code blocks (`code20`)",
    "lists20": "lists (`lists20`)",
    "mixed20": "both (`mixed20`)",
}


def dense_table(result: Mapping[str, Any], speed: str = "") -> str:
    figures = result["figures"]
    summary = figures["summary"]
    ours, plain = summary["firsttoken"], summary.get("textual-plain", {})
    prose = "fast" if speed else "long"
    base = number(ours[prose]["cpu_s"])
    rate = "2,000" if speed else "500"
    lines = [
        f"| 4,000 tokens at {rate} tok/s | app CPU | vs prose | final render lag | "
        "bare plain-text app CPU |",
        "|---|---|---|---|---|",
    ]
    followed = True
    for kind, words in DENSE_KINDS.items():
        scenario = prose if kind == "prose" else kind + speed
        if scenario not in ours:
            continue
        cpu = number(ours[scenario]["cpu_s"])
        ratio = "" if kind == "prose" or not base or cpu is None else f"{cpu / base:.2f}×"
        runs = figures["per_run"]["firsttoken"][scenario]
        lags = [r["final_lag_ms"] for r in runs if number(r["final_lag_ms"]) is not None]
        followed = followed and all(r["followed"] for r in runs)
        spread = f"{min(lags):,.0f}–{max(lags):,.0f} ms" if lags else "–"
        other = seconds(plain.get(scenario, {}).get("cpu_s"), 1)
        lines.append(f"| {words} | {seconds(cpu)} | {ratio} | {spread} | {other} |")
    count = ours[prose]["runs"]
    end = "Every run followed the reply to its end" if followed else "Not every run followed"
    return (
        command_block(result)
        + "\n"
        + "\n".join(lines)
        + f"\n\n{end}; medians of {count} runs ({machine_line(result)}).\n"
    )


def settled_table(result: Mapping[str, Any]) -> str:
    """What a 40-token write costs at the start, middle and end of a dense reply, headless."""
    figures = result["figures"]
    compared = figures["compare"]
    columns = ["reply", *(["settled blocks"] if compared else []), "start", "middle", "end"]
    columns += ["end / start", "all writes"]
    lines = ["| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]
    for row in figures["replies"]:
        cells = [f"`{row['kind']}`"]
        if compared:
            cells.append(row["settled_blocks"])
        cells += [f"{row[key]:.1f} ms" for key in ("start_ms", "middle_ms", "end_ms")]
        cells += [f"{row['end_over_start']:.2f}×", seconds(row["all_writes_s"])]
        lines.append("| " + " | ".join(cells) + " |")
    tail = (
        f"CPU per {figures['step_tokens']}-token write (medians of {figures['rounds']} rounds, "
        f"{figures['density']} blocks per 1,000 tokens; {machine_line(result)})."
    )
    return command_block(result) + "\n" + "\n".join(lines) + "\n\n" + tail + "\n"


def dense_sentence(result: Mapping[str, Any], speed: str = "") -> str:
    """One cell of docs/performance.md for a dense run: each kind's CPU beside prose."""
    summary = result["figures"]["summary"]["firsttoken"]
    prose = "fast" if speed else "long"
    base = number(summary[prose]["cpu_s"]) or 0.0
    parts = [f"prose {seconds(base)}"]
    for kind in ("code20", "lists20", "mixed20"):
        s = summary.get(kind + speed)
        if s is not None and (cpu := number(s["cpu_s"])) is not None and base:
            parts.append(f"`{kind}{speed}` {seconds(cpu)} ({cpu / base:.2f}×)")
    lags = [
        r["final_lag_ms"]
        for runs in result["figures"]["per_run"]["firsttoken"].values()
        for r in runs
        if number(r["final_lag_ms"]) is not None
    ]
    if lags:
        parts.append(f"final lag {min(lags):,.0f}–{max(lags):,.0f} ms")
    return f"medians of {summary[prose]['runs']}: " + ", ".join(parts)


# --- two replies at once in the race view (benchmarks/render/README.md) ----------------------


def race_table(result: Mapping[str, Any]) -> str:
    figures = result["figures"]
    race, one = figures["race"], figures["one_reply"]
    ours, plain = one["firsttoken"], one["textual-plain"]

    def ratio(a: object, b: object) -> str:
        x, y = number(a), number(b)
        return f"{x / y:.2f}×" if x is not None and y else "–"

    lags = " and ".join(ms(v) for v in race["lags_ms"])
    lines = [
        "| | bare plain-text app, one reply | firsttoken, one reply | firsttoken race, two "
        "replies | race / one | target |",
        "|---|---|---|---|---|---|",
        f"| app CPU | {seconds(plain['cpu'])} | {seconds(ours['cpu'])} | {seconds(race['cpu'])} "
        f"| {ratio(race['cpu'], ours['cpu'])} | ≤ 1.6× |",
        f"| bytes written | {kilobytes(plain['bytes'])} | {kilobytes(ours['bytes'])} | "
        f"{kilobytes(race['bytes'])} | {ratio(race['bytes'], ours['bytes'])} | ≤ 2× |",
        f"| final render lag | {ms(plain['lag'])} | {ms(ours['lag'])} | {lags} (a pane) | | "
        "≤ 100 ms a pane |",
    ]
    about = (
        f"The race's two replies write {ratio(race['bytes'], plain['bytes'])} the plain-text "
        f"app's bytes for its one; medians of {figures['runs']} runs ({machine_line(result)})."
    )
    return command_block(result) + "\n" + "\n".join(lines) + f"\n\n{about}\n"


# --- ask's memory and the history at scale (README) -------------------------------------------


def memory_table(result: Mapping[str, Any]) -> str:
    figures = result["figures"]
    sizes = figures["sizes"]
    target = figures.get("target_mb_at_32_mib")
    cells = []
    for size in sizes:
        cell = f"{size['peak_rss_mb']:,.0f} MB"
        if size["mib"] == 32 and target is not None:
            cell += f" (target ≤ {target:,.0f} MB)"
        cells.append(cell)
    header = "| reply | " + " | ".join(f"{s['mib']:g} MiB" for s in sizes) + " |"
    return (
        command_block(result)
        + "\n"
        + "\n".join(
            [header, "|---" * (len(sizes) + 1) + "|", "| peak RSS | " + " | ".join(cells) + " |"]
        )
        + f"\n\n{figures['piece']}-character chunks ({machine_line(result)}).\n"
    )


HISTORY_ROWS = [
    ("the Ctrl+G key until the picker's first page is on screen",
     "Ctrl+G until the picker's list is on screen", "picker's first page (store)"),
    ("`--resume` of a 2,000-message chat to its last message on screen (older ones load as you "
     "scroll up)", "--resume of the 2,000-message chat to its last message", None),
    ("the app ready (in the benchmark's process, imports done)", "app ready", None),
    ("search over every message", "search over every message", None),
    ("statistics over every record", "stats over every record", None),
]  # fmt: skip


def history_table(result: Mapping[str, Any]) -> str:
    figures = result["figures"]
    reads = figures["reads"]
    h = figures["history"]
    lines = ["| what a user waits for | time | target |", "|---|---|---|"]
    for words, key, part in HISTORY_ROWS:
        read = reads.get(key)
        if read is None:
            continue
        cell = ms(read["ms"])
        if part is not None and part in reads:
            cell += f" (the store's part: {ms(reads[part]['ms'])})"
        if key == "stats over every record":
            cell += (
                f" (`firsttoken stats`, process start included: {ms(figures['stats_command_ms'])})"
            )
        lines.append(f"| {words} | {cell} | {read['target']} |")
    about = (
        f"A generated history of {h['chats']:,} chats, {h['messages']:,} messages and "
        f"{h['records']:,} records ({h['megabytes']:,} MB); medians of {figures['runs']} runs "
        f"({machine_line(result)})."
    )
    return command_block(result) + "\n" + "\n".join(lines) + f"\n\n{about}\n"


# --- docs/performance.md's figures ----------------------------------------------------------


@dataclass(frozen=True)
class FigureRow:
    result: str
    what: str
    target: str
    measured: Callable[[Mapping[str, Any]], str] = lambda r: str(r["figures"]["measured"])


FIGURE_ROWS = [
    FigureRow("startup", "`firsttoken --version` start-up", "≤ 300 ms"),
    FigureRow("client-overhead", "TTFT overhead vs a bare openai SDK loop, interleaved",
              "≤ 1 ms at the median"),
    FigureRow("client-parse", "client CPU to consume a 4,000-chunk streamed reply, vs a bare SDK "
              "loop", "feeds the app's CPU budget"),
    FigureRow("ask-launch", "`firsttoken ask`: launch → request received by the server (the demo "
              "endpoint in another process, its own receive stamp)", "≤ 300 ms at the median"),
    FigureRow("cold-first-request", "a process's first request vs a warm one: client TTFT − "
              "server TTFT (the server's own stamps), median difference", "within 3 ms"),
    FigureRow("trim", "count + trim a 2,000-message conversation after one new message",
              "≤ 5 ms"),
    FigureRow("reply-frames", "what each streamed write of a 4,000-token reply costs the screen "
              "(headless, the app's chat pane)", "feeds the render path"),
    FigureRow("long-chat", "a 400-token reply's UI-thread CPU with a long chat on screen "
              "(headless, 400 tok/s, real HTTP): the latest 30 messages laid out vs every "
              "message", "a reply costs no more as the chat grows"),
    FigureRow("block-mount", "a long reply's Markdown blocks (headless): the tail append and the "
              "final full `update()`, reply widget vs stock `Markdown`", "feeds the render path"),
    FigureRow("render-dense", "4,000-token replies dense with blocks vs prose, 500 tok/s, on the "
              "emulated terminal: code blocks (`code20`, ~80 fences), lists (`lists20`, ~276 "
              "items in ~70 lists), both (`mixed20`)", "CPU ≤ 1.3× prose and ≤ 3 s, final lag ≤ "
              "100 ms", dense_sentence),
    FigureRow("render-dense-fast", "the same at 2,000 tok/s", "reported beside prose",
              lambda r: dense_sentence(r, "-fast")),
    FigureRow("settled-blocks", "what one 40-token write costs at the start, middle and end of "
              "such a reply (headless, the app's chat pane)", "flat"),
]  # fmt: skip


def figures_table(results: Results) -> str:
    lines = ["| what | target | measured | command |", "|---|---|---|---|"]
    for row in FIGURE_ROWS:
        result = results(row.result)
        measured = row.measured(result) if result is not None else NOT_MEASURED
        command = f"`{result['command']}`" if result is not None else "–"
        lines.append(f"| {row.what} | {row.target} | {measured} | {command} |")
    lines.append(
        "| the app on an emulated terminal beside oterm, elia and bare Textual apps | see the "
        "table | [the README](../README.md#results) | `python -m benchmarks.render.run_all` |"
    )
    return "\n".join(lines) + "\n"


# --- where each table goes ------------------------------------------------------------------


def _one(name: str, draw: Callable[[Mapping[str, Any]], str]) -> Callable[[Results], str]:
    def table(results: Results) -> str:
        result = results(name)
        if result is None:
            return f"{NOT_MEASURED}: run the benchmark that saves `{name}`.\n"
        return draw(result)

    return table


TABLES: dict[str, Callable[[Results], str]] = {
    "render": _one("render", render_table),
    "render-full": _one("render", render_full_table),
    "render-ratios": _one("render", ratios_table),
    "render-dense": _one("render-dense", dense_table),
    "render-dense-fast": _one("render-dense-fast", lambda r: dense_table(r, "-fast")),
    "settled-blocks": _one("settled-blocks", settled_table),
    "render-race": _one("render-race", race_table),
    "ask-memory": _one("ask-memory", memory_table),
    "history-scale": _one("history-scale", history_table),
    "figures": figures_table,
}
DOCUMENTS = (
    ROOT / "README.md",
    ROOT / "docs" / "performance.md",
    ROOT / "benchmarks" / "render" / "README.md",
)


def generated(text: str, results: Results) -> tuple[str, list[str]]:
    """The document with every marked table written again, and the names of those found."""
    found: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in TABLES:
            raise SystemExit(f"tables: error: unknown table {name!r}; known: {', '.join(TABLES)}")
        found.append(name)
        return match[1] + TABLES[name](results) + match[4]

    return MARK.sub(replace, text), found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    parser.add_argument("--results", type=Path, default=KEPT, help="where the results are")
    args = parser.parse_args(argv)

    def results(name: str) -> dict[str, Any] | None:
        return load(name, args.results)

    stale = []
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        new, found = generated(text, results)
        if new != text:
            stale.append(f"{path.relative_to(ROOT)} ({', '.join(found)})")
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.check and stale:
        print("tables: these differ from benchmarks/results/: " + "; ".join(stale))
        print("run `python -m benchmarks.tables` to write them again")
        return 1
    for entry in stale:
        print(f"written: {entry}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
