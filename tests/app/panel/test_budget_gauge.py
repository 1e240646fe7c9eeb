"""The budget gauge shows the figures it is given, and asks for a (whole-screen) layout only
when its height changes: the next request's budget is counted while a reply streams."""

from __future__ import annotations

from typing import Any

from helpers.app_pilot import WidgetsInApp, record_layouts, wait_for
from helpers.virtual_terminal import VirtualTerminal, settled

from tui.app.panel.budget_gauge import BudgetFigures, BudgetGauge


def figures(tokens: int, before: int | None = None) -> BudgetFigures:
    return BudgetFigures(
        tokens_before=tokens if before is None else before,
        tokens_after=tokens,
        budget=6000,
        reserve=2000,
        exact=False,
        trimming=True,
    )


async def test_new_figures_of_the_same_shape_lay_nothing_out(monkeypatch: Any) -> None:
    layouts = record_layouts(monkeypatch)
    gauge = BudgetGauge(id="budget")
    app = WidgetsInApp(gauge)
    async with app.run_test(size=(15, 10)) as pilot:
        terminal = VirtualTerminal(app)

        async def show(shown: BudgetFigures) -> int:
            await wait_for(pilot, lambda: settled(app), what="an idle screen")
            before = len(layouts)
            gauge.show(shown)
            await wait_for(pilot, lambda: settled(app), what="the gauge to be painted")
            assert terminal.differences() == []
            return len(layouts) - before

        # 15 columns: the figures' line always wraps once, twice when it is long.
        await show(figures(8))  # "counting tokens…" (one line) -> three
        assert gauge.content_size.height == 3
        assert await show(figures(191)) == 0  # the same lines, new figures
        assert "≈191 / 6,000" in terminal.text()
        # A longer line wraps: laid out (Textual lays out again once the gauge has grown).
        assert await show(figures(1200, before=9000)) >= 1
        assert gauge.content_size.height == 4
        assert "≈9,000 → 1,200" in terminal.text().replace("\n", " ")
