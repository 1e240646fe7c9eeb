"""Where the last reply's TTFT went, in one proportional line and its legend.

The parts are the engine's (`ttft_anatomy`): the client's measured phases, the server's own
figures, and the remainder; each gets cells in proportion to its time, and the legend under
the bar names every part with its time (a part too short for a cell is still named there).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from tui.app.render import keeps_height
from tui.app.theme_colors import theme_colour
from tui.engine.metrics.anatomy import CLIENT, REMAINDER, SERVER, Anatomy

# Short names for the panel's width; the tooltip and F1 say what each part is.
SHORT_NAMES = {
    "retries": "retry",
    "connection": "connect",
    "request": "send",
    "network + queue": "net+queue",
    "server + network": "server+net",
}
# A glyph per kind of measurement, so the bar reads without colour too.
GLYPHS = {CLIENT: "▓", SERVER: "█", REMAINDER: "░"}
IDLE_NOTE = "where TTFT went, after each reply"
LINES = 3  # the bar and two lines of legend


@dataclass(frozen=True)
class WaterfallFigures:
    anatomy: Anatomy
    connection_reused: bool | None  # None: the client did not say


def format_part_ms(ms: float) -> str:
    """Tight for the legend: "6.62s", "42ms", "0.2ms"."""
    if ms >= 1000:
        return f"{ms / 1000:.2f}s"
    return f"{ms:.0f}ms" if ms >= 10 else f"{ms:.1f}ms"


def cells_for(times: list[float], width: int) -> list[int]:
    """Cells per part, in proportion to `times`, summing to `width` (largest remainders win the
    rounding); negative times count as none."""
    clamped = [max(0.0, t) for t in times]
    whole = sum(clamped)
    if whole <= 0 or width <= 0:
        return [0] * len(times)
    exact = [t / whole * width for t in clamped]
    cells = [int(e) for e in exact]
    by_remainder = sorted(range(len(exact)), key=lambda i: exact[i] - cells[i], reverse=True)
    for i in by_remainder[: width - sum(cells)]:
        cells[i] += 1
    return cells


class TtftWaterfall(Static):
    """The bar, then the legend wrapped to the width (three lines, more only if it must)."""

    DEFAULT_CSS = "TtftWaterfall { height: auto; }"

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.figures: WaterfallFigures | None = None
        self.note = IDLE_NOTE  # shown under an empty bar while there are no figures
        self._drawn = False

    def show(self, figures: WaterfallFigures | None) -> None:
        """A reply's parts (None: no reply yet)."""
        self._change(figures, IDLE_NOTE)

    def show_pending(self, note: str) -> None:
        """No parts to show (a request under way, or without a first token): `note` says why."""
        self._change(None, note)

    def _change(self, figures: WaterfallFigures | None, note: str) -> None:
        if self._drawn and figures == self.figures and note == self.note:
            return  # the 10 Hz tick costs nothing here
        self.figures = figures
        self.note = note
        self.redraw()

    def on_resize(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        self._drawn = True
        text = self._render_figures()
        # A layout arranges the whole screen: ask for one only when the height changes.
        self.update(text, layout=not keeps_height(self, text))

    def _styles(self) -> dict[str, str]:
        secondary = theme_colour(self.app, "secondary", "magenta")
        return {
            CLIENT: theme_colour(self.app, "primary", "blue"),
            SERVER: theme_colour(self.app, "accent", secondary),
            REMAINDER: "dim",
        }

    def _render_figures(self) -> Text:
        width = max(10, self.content_size.width or 30)
        figures = self.figures
        if figures is None:
            return _padded(Text.assemble(("╌" * width, "dim"), "\n", (self.note, "dim")))
        styles = self._styles()
        parts = figures.anatomy.parts
        bar = Text()
        for part, cells in zip(parts, cells_for([p.ms for p in parts], width), strict=True):
            bar.append(GLYPHS[part.measured_by] * cells, style=styles[part.measured_by])
        items: list[Text] = []
        if figures.connection_reused:  # no connect part: the request went over a kept one
            items.append(Text.assemble((GLYPHS[CLIENT], styles[CLIENT]), (" reused", "dim")))
        for part in parts:
            name = SHORT_NAMES.get(part.name, part.name)
            items.append(
                Text.assemble(
                    (GLYPHS[part.measured_by], styles[part.measured_by]),
                    f" {name} ",
                    (format_part_ms(part.ms), "bold"),
                )
            )
        if figures.anatomy.note:
            items.append(Text("server's own figures not used", style="dim italic"))
        return _padded(Text("\n").join([bar, _wrapped(items, width)]))


def _padded(text: Text) -> Text:
    """At least LINES lines: the widget keeps its height from one reply to the next."""
    missing = LINES - len(text.plain.split("\n"))
    for _ in range(missing):
        text.append("\n ")
    return text


def _wrapped(items: list[Text], width: int) -> Text:
    """The items separated by two spaces, a new line where the next would not fit."""
    legend = Text()
    line = 0
    for item in items:
        if line and line + 2 + len(item) > width:
            legend.append("\n")
            line = 0
        elif line:
            legend.append("  ")
            line += 2
        legend.append_text(item)
        line += len(item)
    return legend
