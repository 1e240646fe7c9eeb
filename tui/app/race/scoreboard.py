"""Above a race's lanes: who reached the first token first in each round, by how much, and the
verdict so far (engine/race.py: a rank test over every round, not the last one).

Three rows from the start, each cut to the width: a round's end changes what they say, never
their height, so the lanes below keep their rows and the replies do not move when a round ends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual.widgets import Static

from tui.app.panel.ttft_history import format_ms
from tui.app.theme_colors import theme_colour
from tui.engine.race import RaceVerdict

ROUNDS_SHOWN = 4  # the latest rounds, newest first (a narrow screen cuts the oldest off)


def round_line(number: int, ttfts: Mapping[str, float | None]) -> str:
    """ "round 3: a first by 120 ms" (or who failed)."""
    timed = sorted((ms, label) for label, ms in ttfts.items() if ms is not None)
    failed = [label for label, ms in ttfts.items() if ms is None]
    if not timed:
        return f"round {number}: no first token"
    line = f"round {number}: {timed[0][1]} first"
    if len(timed) > 1:
        line += f" by {format_ms(timed[1][0] - timed[0][0])}"
    if failed:
        line += f" ({', '.join(failed)} failed)"
    return line


class Scoreboard(Static):
    DEFAULT_CSS = """
    Scoreboard {
        height: 3;
        padding: 0 1;
        background: $boost;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, about: str, **kwargs: object) -> None:
        super().__init__("", markup=False, **kwargs)  # type: ignore[arg-type]
        self.about = about
        self.rounds: list[dict[str, float | None]] = []
        self.verdict: RaceVerdict | None = None

    def on_mount(self) -> None:
        self.show()

    def add_round(self, ttfts: Mapping[str, float | None], verdict: RaceVerdict) -> None:
        self.rounds.append(dict(ttfts))
        self.verdict = verdict
        self.show()

    def show(self) -> None:
        success = theme_colour(self.app, "success", "green")
        text = Text(self.about, style="dim")
        latest = list(enumerate(self.rounds, 1))[-ROUNDS_SHOWN:]
        if latest:
            text.append("\n" + " · ".join(round_line(n, t) for n, t in reversed(latest)))
        else:
            text.append("\nsend a message: every target answers it, in turn", style="dim")
        text.append("\nso far: ", style="dim")
        if self.verdict is not None:
            style = f"bold {success}" if self.verdict.decided else "bold"
            text.append(self.verdict.summary, style=style)
        else:
            text.append("no rounds yet", style="dim")
        self.update(text)


def about_line(labels: Sequence[str], together: bool, cold: bool) -> str:
    order = "all at once" if together else "one at a time, the order reversed each round"
    heat = "each request cold" if cold else "warm"
    return f"race: {' vs '.join(labels)} · {order} · {heat}"
