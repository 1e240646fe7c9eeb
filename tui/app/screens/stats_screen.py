"""Statistics: the kept records' figures for this chat's model and endpoint, beside every other
model and endpoint's, with the TTFT histogram (the same figures `firsttoken stats` prints,
tui/engine/metrics/statistics.py). So "is this model slower than last week" is one key away.
Closed with Esc (or its key again)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from tui.app.screens.modal_once import ModalOnce
from tui.engine.metrics.statistics import GroupStats
from tui.engine.text.figures import duration, per_token
from tui.engine.text.inert import inert_line
from tui.session.stats_plots import group_label, ttft_histogram

HISTOGRAM_HEIGHT = 14
COLUMNS = ("model", "endpoint", "requests", "TTFT p50", "p95", "p99", "TPOT p50", "SLO met",
           "errors")  # fmt: skip


def _percent(group: GroupStats) -> str:
    share = group.attainment
    return "—" if share is None else f"{share * 100:.0f}% of {group.judged:,}"


def _errors(group: GroupStats) -> str:
    return str(sum(group.errors.values())) if group.errors else "—"


def summary_text(group: GroupStats | None, model: str) -> str:
    """The current model's figures in a few lines, or why there are none."""
    if group is None:
        return f"{model}: no request recorded at this endpoint yet"
    ttft = group.ttft_ms
    lines = [
        f"{group_label(group)} @ {inert_line(group.endpoint_host)} · {group.count:,} requests, "
        f"{group.streamed_ok:,} streamed",
        "TTFT  " + " · ".join(f"p{q} {duration(ttft[f'p{q}'])}" for q in (50, 90, 95, 99)),
        f"first answer p50 {duration(group.time_to_first_answer_ms['p50'])} · "
        f"TPOT p50 {per_token(group.tpot_ms['p50'])} · total p50 {duration(group.total_ms['p50'])}",
        f"SLO met {_percent(group)} · errors "
        + (", ".join(f"{k} {n}" for k, n in sorted(group.errors.items())) or "none")
        + (f" · cached {group.cached_share * 100:.0f}%" if group.cached_share is not None else ""),
    ]
    return "\n".join(lines)


class StatsScreen(ModalOnce[None]):
    DEFAULT_CSS = """
    StatsScreen {
        align: center middle;
        background: $background 60%;
    }
    StatsScreen > Vertical {
        width: 96%;
        height: 94%;
        border: round $primary;
        border-title-color: $primary;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
        padding: 0 1;
    }
    StatsScreen #stats-current {
        color: $foreground;
        margin: 0 0 1 0;
    }
    StatsScreen DataTable {
        height: auto;
        max-height: 12;
        margin: 0 0 1 0;
    }
    StatsScreen #stats-plot {
        height: auto;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("f11,ctrl+backslash", "close", "Close", show=False),
    ]

    def __init__(
        self, groups: list[GroupStats], current: tuple[str, str], model_shown: str
    ) -> None:
        super().__init__()
        self.groups = groups
        self.current = next((g for g in groups if (g.model, g.endpoint_host) == current), None)
        self.model_shown = model_shown

    def compose(self) -> ComposeResult:
        total = sum(group.count for group in self.groups)
        with Vertical() as frame:
            frame.border_title = f"Statistics · {total:,} requests kept"
            frame.border_subtitle = "Esc to close · firsttoken stats prints these too"
            with VerticalScroll(can_focus=True):
                yield Static(summary_text(self.current, self.model_shown), id="stats-current",
                             markup=False)  # fmt: skip
                yield DataTable(cursor_type="row", zebra_stripes=True)
                yield Static("", id="stats-plot", markup=False)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*COLUMNS)
        ordered = sorted(self.groups, key=lambda g: g is not self.current)
        for group in ordered:
            marker = "▶ " if group is self.current else ""
            table.add_row(
                marker + group_label(group),
                inert_line(group.endpoint_host),
                f"{group.count:,}",
                duration(group.ttft_ms["p50"]),
                duration(group.ttft_ms["p95"]),
                duration(group.ttft_ms["p99"]),
                per_token(group.tpot_ms["p50"]),
                _percent(group),
                _errors(group),
            )
        self.query_one(VerticalScroll).focus()
        self.call_after_refresh(self._draw_plot)

    def _draw_plot(self) -> None:
        """The histogram at the frame's width: this chat's model first, then the busiest."""
        ordered = sorted(self.groups, key=lambda g: g is not self.current)
        width = max(40, self.query_one(VerticalScroll).content_region.width - 2)
        drawn = ttft_histogram(ordered, width, HISTOGRAM_HEIGHT)
        plot = self.query_one("#stats-plot", Static)
        plot.update(Text.from_ansi(drawn) if drawn else Text("no streamed request to draw yet"))

    def action_close(self) -> None:
        self.dismiss(None)
