"""The statistics' plots, drawn by plotext for `firsttoken stats` and the app's statistics
screen alike: a TTFT histogram and TTFT over time of the groups with the most streamed
requests. Model ids are untrusted: each label is made inert before plotext sees it."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from tui.engine.text.inert import inert_line

if TYPE_CHECKING:
    from tui.engine.metrics.statistics import GroupStats

PLOTTED_GROUPS = 4  # a histogram with more overlaid groups cannot be read
COLORS = ("cyan", "orange", "green", "magenta")  # one a group, readable on dark and light
HEIGHT = 16


def _canvas(width: int, height: int) -> None:
    """A fresh figure of exactly this size (plotext would otherwise cap it at the size of the
    terminal it finds, which is not the app's frame nor a pipe's)."""
    import plotext as plt

    plt.clf()
    plt.limit_size(False, False)
    plt.plotsize(width, height)


def group_label(group: GroupStats) -> str:
    return inert_line(group.model)[:40] + (" (sim)" if group.simulated else "")


def _plotted(groups: list[GroupStats]) -> list[GroupStats]:
    return [group for group in groups if group.ttft_values][:PLOTTED_GROUPS]


def ttft_histogram(groups: list[GroupStats], width: int, height: int = HEIGHT) -> str | None:
    """The histogram, in plotext's colours (None: no streamed request to draw)."""
    import plotext as plt

    shown = _plotted(groups)
    if not shown:
        return None
    _canvas(width, height)
    plt.theme("clear")
    for group, color in zip(shown, COLORS, strict=False):
        plt.hist(group.ttft_values, bins=min(40, max(5, width // 3)), label=group_label(group),
                 color=color)  # fmt: skip
    plt.title("TTFT histogram (streamed requests)")
    plt.xlabel("TTFT ms")
    return str(plt.build())


def ttft_over_time(groups: list[GroupStats], width: int, height: int = HEIGHT) -> str | None:
    """TTFT against when each request started (None: fewer than two moments to draw)."""
    import plotext as plt

    shown = _plotted(groups)
    stamps = [t for group in shown for t in group.ttft_epochs]
    if len(set(stamps)) < 2:
        return None
    _canvas(width, height)
    plt.theme("clear")
    for group, color in zip(shown, COLORS, strict=False):
        plt.scatter(group.ttft_epochs, group.ttft_values, label=group_label(group),
                    marker="dot", color=color)  # fmt: skip
    first, last = min(stamps), max(stamps)
    # Ticks of the form the span needs: seconds within minutes, dates over weeks.
    span = last - first
    form = "%H:%M:%S" if span < 600 else "%H:%M" if span < 86400 else "%m-%d %H:%M"
    if span >= 7 * 86400:
        form = "%Y-%m-%d"
    ticks = [first + span * step / 4 for step in range(5)]
    plt.xticks(ticks, [time.strftime(form, time.localtime(t)) for t in ticks])
    plt.title("TTFT over time")
    plt.ylabel("TTFT ms")
    return str(plt.build())


def uncolored(text: str) -> str:
    """A plot without its colour codes (for a pipe, a file or NO_COLOR)."""
    import plotext as plt

    return str(plt.uncolorize(text))
