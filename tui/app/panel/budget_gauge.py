"""Prompt tokens against the budget, with reserve_for_output drawn after it.

One line bar: the kept prompt (solid), what trimming drops (hatched), the free budget, and the
output reserve; then the figures, before -> after trimming. The figures are the server's own
count when its tokenizer counted every message (no `≈`), else the calibrated local estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from tui.app.render import keeps_height
from tui.app.theme_colors import theme_colour


@dataclass(frozen=True)
class BudgetFigures:
    tokens_before: int  # the whole prompt if sent untrimmed
    tokens_after: int  # what trimming keeps (== before when trimming is off)
    budget: int
    reserve: int
    exact: bool
    trimming: bool


def _fmt(n: int) -> str:
    return f"{n:,}"


class BudgetGauge(Static):
    DEFAULT_CSS = "BudgetGauge { height: auto; }"

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.figures: BudgetFigures | None = None

    def show(self, figures: BudgetFigures | None) -> None:
        if figures == self.figures:
            return
        self.figures = figures
        self._show(self._render_figures(figures))

    def on_resize(self) -> None:
        self._show(self._render_figures(self.figures))

    def _show(self, text: Text) -> None:
        # A layout arranges the whole screen (the chat too, mid-reply: the next request's
        # budget is counted while one streams): ask for one only when the height changes.
        self.update(text, layout=not keeps_height(self, text))

    def _render_figures(self, f: BudgetFigures | None) -> Text:
        if f is None:
            return Text("counting tokens…", style="dim")
        width = max(10, self.content_size.width or 30)
        scale = max(f.budget + f.reserve, f.tokens_before, 1)

        def cells(n: int) -> int:
            return round(n / scale * width)

        kept = cells(f.tokens_after)
        dropped = max(0, cells(f.tokens_before) - kept)
        over = f.tokens_after > f.budget
        reserve = cells(f.reserve)
        free = max(0, width - kept - dropped - reserve)
        error = theme_colour(self.app, "error", "red")
        bar = Text()
        bar.append("█" * kept, style=error if over else theme_colour(self.app, "primary", "blue"))
        bar.append("░" * dropped, style=theme_colour(self.app, "warning", "yellow"))
        bar.append("·" * free, style="dim")
        bar.append(
            "▒" * max(0, width - kept - dropped - free),
            style=theme_colour(self.app, "secondary", "blue"),
        )
        approx = "" if f.exact else "≈"
        line = Text()
        if f.trimming and f.tokens_before != f.tokens_after:
            line.append(f"{approx}{_fmt(f.tokens_before)} → ")
            line.append(f"{_fmt(f.tokens_after)}", style="bold")
        else:
            line.append(f"{approx}{_fmt(f.tokens_after)}", style="bold")
        line.append(f" / {_fmt(f.budget)}", style="dim")
        if over:
            line.append(" over!", style=f"bold {error}")
        reserved = f" +{_fmt(f.reserve)} out"
        # The word "budget" where the line has room for it: one line in the panel's width.
        if len(line) + len(" budget") + len(reserved) <= width:
            line.append(" budget", style="dim")
        line.append(reserved, style="dim")
        return Text("\n").join([bar, line])
