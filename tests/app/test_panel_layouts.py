"""Live figures that change the size of the panel's text cost one screen layout, not two."""

from __future__ import annotations

from typing import Any

from app_helpers import WidgetsInApp, wait_for
from virtual_terminal import VirtualTerminal, settled

from tui.app.live_figures import LiveFigures
from tui.app.widgets.latency_panel import LatencyPanel
from tui.engine.metrics import Thresholds

FIRST_FIGURES = LiveFigures(
    elapsed_ms=140.0,
    ttfb_ms=95.0,
    ttft_ms=118.0,
    tokens=20,
    decode_s=0.15,
    retries=0,
    streamed=True,
)


async def test_figures_that_resize_the_panels_text_are_laid_out_once() -> None:
    app = WidgetsInApp(LatencyPanel(Thresholds(warn_ms=500, error_ms=1500), id="panel"))
    async with app.run_test(size=(60, 40)) as pilot:
        terminal = VirtualTerminal(app)
        panel = app.query_one(LatencyPanel)
        await panel.fill()
        panel.show_idle()
        await wait_for(pilot, lambda: settled(app), what="the idle panel to be painted")
        digits, unit = panel.query_one("#ttft"), panel.query_one("#ttft-unit")
        sizes_before = (digits.size, unit.size)
        compositor = app.screen._compositor
        reflow = compositor.reflow
        reflows = 0

        def counted_reflow(parent: Any, size: Any) -> Any:
            nonlocal reflows
            reflows += 1
            return reflow(parent, size)

        compositor.reflow = counted_reflow  # type: ignore[method-assign]
        panel.show_live(FIRST_FIGURES)  # "--" becomes "118", the unit "ms" appears
        await wait_for(pilot, lambda: settled(app), what="the live figures to be painted")
        await pilot.pause(0.1)  # a second layout would be asked for as the first stores sizes
        await wait_for(pilot, lambda: settled(app), what="anything after them")
        assert (digits.size, unit.size) != sizes_before  # the figures did resize the text
        assert str(unit.content) == "ms"
        # Textual's own widgets asked for a second layout here, as each stored its new size.
        assert reflows == 1
        assert terminal.differences() == []  # and that one layout painted all of it
