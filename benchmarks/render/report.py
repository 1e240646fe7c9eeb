"""The Markdown table of benchmarks/render/README.md, one column per app, from the summarized
runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping

Summary = Mapping[str, object]

TARGETS = {
    "ready": "≤ 0.5 s",
    "enter": "≤ 20 ms",
    "first": "≤ 10 ms",
    "final_short": "≤ 15 ms",
    "cpu_short": "≤ 0.10 s",
    "bytes_short": "≤ 25 KB",
    "final_long": "≤ 100 ms, following to the end",
    "cpu_long": "≤ 3 s",
    "final_fast": "≤ 100 ms",
    "cpu_fast": "reported beside a bare MarkdownStream app",
}


def number(value: object) -> float | None:
    """A figure as a float; None for anything else (a run that did not measure it)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def ms(value: object) -> str:
    v = number(value)
    return "–" if v is None else f"{v:,.0f} ms"


def seconds(value: object, digits: int = 2) -> str:
    v = number(value)
    return "–" if v is None else f"{v:.{digits}f} s"


def kilobytes(value: object) -> str:
    v = number(value)
    return "–" if v is None else f"{v / 1000:,.0f} KB"


def _cpu(summary: Summary, digits: int) -> str:
    """From Enter; in brackets from the moment the request reached the endpoint, which
    leaves out work on the send path (elia's first-send import)."""
    whole, reply = summary.get("cpu_s"), summary.get("cpu_reply_s")
    return f"{seconds(whole, digits)} ({seconds(reply, digits)})"


def _lag(summary: Summary) -> str:
    text = "+" + ms(summary.get("final_lag_ms")) if number(summary.get("final_lag_ms")) else "–"
    if not summary.get("followed_all"):
        text += " (did not follow to the end in every run)"
    return text


Row = tuple[str, str, str, Callable[[Summary], str]]  # label, scenario, target key, cell

ROWS: list[Row] = [
    ("app ready after start", "short", "ready", lambda s: seconds(s.get("ready_s"))),
    (
        "Enter → request reaches the server (first message)",
        "short",
        "enter",
        lambda s: ms(s.get("enter_to_request_ms")),
    ),
    (
        "first token on screen after the server sent it",
        "short",
        "first",
        lambda s: ms(s.get("first_token_ms")),
    ),
    (
        "final render lag after the last chunk, 60-token reply",
        "short",
        "final_short",
        lambda s: ms(s.get("final_lag_ms")),
    ),
    ("app CPU time for a 60-token reply", "short", "cpu_short", lambda s: _cpu(s, 2)),
    (
        "bytes written to the terminal for a 60-token reply",
        "short",
        "bytes_short",
        lambda s: kilobytes(s.get("bytes_written")),
    ),
    ("4,000-token reply at ~500 tokens/s: final render lag", "long", "final_long", _lag),
    ("same: app CPU time", "long", "cpu_long", lambda s: _cpu(s, 1)),
    ("4,000-token reply at 2,000 tokens/s: final render lag", "fast", "final_fast", _lag),
    ("same: app CPU time", "fast", "cpu_fast", lambda s: _cpu(s, 1)),
]


def table(results: Mapping[str, Mapping[str, Summary]], labels: Mapping[str, str]) -> str:
    """results[app][scenario] -> summary; apps in the order given, then the targets."""
    apps = list(results)
    header = "| measure | " + " | ".join(labels.get(a, a) for a in apps) + " | target |"
    lines = [header, "|---" * (len(apps) + 2) + "|"]
    for label, scenario, target, cell in ROWS:
        cells = []
        for app in apps:
            summary = results[app].get(scenario)
            cells.append(cell(summary) if summary else "not run")
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {TARGETS[target]} |")
    return "\n".join(lines)


def notes(results: Mapping[str, Mapping[str, Summary]]) -> str:
    out = []
    for app, by_scenario in results.items():
        for scenario, summary in by_scenario.items():
            for note in summary.get("notes") or []:  # type: ignore[attr-defined]
                out.append(f"- {app}, {scenario}: {note}")
    return "\n".join(out)
