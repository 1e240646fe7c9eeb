"""`firsttoken stats`: the kept latency records as answers, per model and endpoint: how many,
TTFT, time to first answer, TPOT and total at p50/p90/p95/p99, SLO attainment and goodput,
errors by kind and the cached share of prompt tokens; then a TTFT histogram and TTFT over time,
drawn in the terminal by plotext. `--json` prints one object with a `groups` list.

It only reads (the history is opened read-only). Exit codes: 0 ok (also when nothing matches),
1 the history file cannot be read, 2 usage.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from tui.commands._common import EXIT_FAILED, EXIT_OK, error
from tui.commands.bench_output import count, duration, table
from tui.engine.text.figures import per_token
from tui.engine.text.inert import inert_line, json_text
from tui.session.stats_plots import group_label

if TYPE_CHECKING:
    from tui.engine.metrics.statistics import GroupStats

_UNITS = {"m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}


def since_epoch(text: str, now: float | None = None) -> float:
    """`--since`: a span back from now (30m, 12h, 7d, 2w) or a local date (2026-11-01) or date
    and time (2026-11-01T09:30)."""
    now = time.time() if now is None else now
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*", text.lower())
    if found:
        return now - float(found.group(1)) * _UNITS[found.group(2)]
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a span back from now like 30m, 12h, 7d or 2w, or a date like 2026-11-01; "
            f"got {text!r}"
        ) from None


def _percent(share: float | None) -> str:
    return "—" if share is None else f"{share * 100:.0f}%"


def _errors(group: GroupStats) -> str:
    if not group.errors:
        return "—"
    return ", ".join(f"{kind} {n}" for kind, n in sorted(group.errors.items(), key=lambda i: -i[1]))


def _goodput(group: GroupStats) -> str:
    """The good requests and the span they came in (the rate over days of idle time would
    read as slowness): `--json` has the rate."""
    if not group.judged:
        return "—"
    return f"{count(group.met)} in {_span(group.span_s)}"


def _span(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def figure_lines(groups: list[GroupStats]) -> list[str]:
    """Two tables: the TTFT spread, then everything else."""
    ttft_header = ["model", "endpoint", "requests", "streamed", "TTFT p50", "p90", "p95", "p99"]
    ttft_header += ["first answer p50", "p95"]
    ttft_rows = [
        [
            group_label(group),
            inert_line(group.endpoint_host)[:40],
            count(group.count),
            count(group.streamed_ok),
            *(duration(group.ttft_ms[f"p{q}"]) for q in (50, 90, 95, 99)),
            duration(group.time_to_first_answer_ms["p50"]),
            duration(group.time_to_first_answer_ms["p95"]),
        ]
        for group in groups
    ]
    rest_header = ["model", "TPOT p50", "p95", "total p50", "p95", "SLO met", "good"]
    rest_header += ["cached", "errors"]
    rest_rows = [
        [
            group_label(group),
            per_token(group.tpot_ms["p50"]),
            per_token(group.tpot_ms["p95"]),
            duration(group.total_ms["p50"]),
            duration(group.total_ms["p95"]),
            f"{_percent(group.attainment)} of {count(group.judged)}" if group.judged else "—",
            _goodput(group),
            _percent(group.cached_share),
            _errors(group),
        ]
        for group in groups
    ]
    return [
        *table(ttft_header, ttft_rows, words=(0, 1)),
        "",
        *table(rest_header, rest_rows, words=(0, 8)),
    ]


def plot_lines(groups: list[GroupStats], width: int, color: bool) -> list[str]:
    """The TTFT histogram, then TTFT over time, with a blank line before each."""
    from tui.session.stats_plots import ttft_histogram, ttft_over_time, uncolored

    lines: list[str] = []
    for text in (ttft_histogram(groups, width), ttft_over_time(groups, width)):
        if text:
            lines += ["", *(text if color else uncolored(text)).rstrip("\n").split("\n")]
    return lines


def payload(groups: list[GroupStats], since: float | None, filters: dict[str, Any]) -> dict:
    return {
        "since_epoch": since,
        "filters": filters,
        "count": sum(group.count for group in groups),
        "groups": [group.to_dict() for group in groups],
    }


def _color_allowed(out: TextIO) -> bool:
    return out.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = sys.stdout if out is None else out  # looked up now: a caller may have replaced it
    err = sys.stderr if err is None else err
    from tui.engine.metrics.statistics import group_stats
    from tui.engine.store.database import Store, StoreError
    from tui.locations import history_db_path

    path = history_db_path()
    if not path.exists():
        print(f"no history yet: nothing has been sent ({path})", file=err)
        return EXIT_OK
    since = args.since
    model, host = getattr(args, "model", None), args.endpoint
    try:
        with Store(path, read_only=True) as store:
            rows = store.latency_rows(since, model, host)
    except StoreError as unreadable:
        error(str(unreadable), err)
        return EXIT_FAILED
    groups = group_stats(rows)
    if args.json:
        filters = {"model": model, "endpoint": host}
        out.write(json_text(payload(groups, since, filters)) + "\n")
        return EXIT_OK
    if not groups:
        print(f"no requests recorded{' that match' if since or model or host else ''} ({path})",
              file=err)  # fmt: skip
        return EXIT_OK
    width = max(40, min(110, shutil.get_terminal_size((100, 24)).columns - 2))
    when = f" since {time.strftime('%Y-%m-%d %H:%M', time.localtime(since))}" if since else ""
    lines = [
        f"{count(len(rows))} requests{when}; TTFT and TPOT over streamed requests "
        f"(p50/p90/p95/p99, linear interpolation); total over successful ones",
        "",
        *figure_lines(groups),
    ]
    if not args.no_plot:
        lines += plot_lines(groups, width, _color_allowed(out))
    out.write("\n".join(lines) + "\n")
    return EXIT_OK
