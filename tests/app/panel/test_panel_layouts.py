"""Live figures that change the size of the panel's text cost one screen layout, not two; the
TTFT colour costs a restyle only when its level changes."""

from __future__ import annotations

import dataclasses
from typing import Any

from helpers.app_pilot import WidgetsInApp, wait_for
from helpers.virtual_terminal import VirtualTerminal, settled

from tui.app.panel.latency_panel import LatencyPanel
from tui.app.panel.live_figures import LiveFigures
from tui.engine.metrics.record import Thresholds

FIRST_FIGURES = LiveFigures(
    elapsed_ms=140.0,
    ttfb_ms=95.0,
    ttft_ms=118.0,
    tokens=20,
    decode_s=0.15,
    retries=0,
    streamed=True,
)


async def idle_panel(app: WidgetsInApp, pilot: Any) -> LatencyPanel:
    """The app's panel, filled and showing "--", painted."""
    panel = app.query_one(LatencyPanel)
    await panel.fill()
    panel.show_idle()
    await wait_for(pilot, lambda: settled(app), what="the idle panel to be painted")
    return panel


async def test_figures_that_resize_the_panels_text_are_laid_out_once() -> None:
    app = WidgetsInApp(LatencyPanel(Thresholds(warn_ms=500, error_ms=1500), id="panel"))
    async with app.run_test(size=(60, 40)) as pilot:
        terminal = VirtualTerminal(app)
        panel = await idle_panel(app, pilot)
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
        # Textual's own widgets would ask for a second layout here, as each stores its size.
        assert reflows == 1
        assert terminal.differences() == []  # and that one layout painted all of it


async def test_the_ttft_colour_restyles_only_when_its_level_changes(monkeypatch: Any) -> None:
    app = WidgetsInApp(LatencyPanel(Thresholds(warn_ms=500, error_ms=1500), id="panel"))
    async with app.run_test(size=(60, 40)) as pilot:
        terminal = VirtualTerminal(app)
        panel = await idle_panel(app, pilot)
        digits, unit = panel.query_one("#ttft"), panel.query_one("#ttft-unit")
        restyled: list[Any] = []
        update_styles = type(app).update_styles

        def counted(self: Any, node: Any, animate: bool = True) -> None:
            restyled.append(node)
            update_styles(self, node, animate)

        monkeypatch.setattr(type(app), "update_styles", counted)
        panel.show_live(FIRST_FIGURES)  # idle -> ok: one restyle each
        assert digits.has_class("-ok") and not digits.has_class("-idle")
        assert restyled.count(digits) == 1 and restyled.count(unit) == 1
        restyled.clear()
        panel.show_live(dataclasses.replace(FIRST_FIGURES, ttft_ms=131.0))  # still ok
        assert str(digits.value) == "131" and restyled == []
        panel.show_live(dataclasses.replace(FIRST_FIGURES, ttft_ms=900.0))  # ok -> warn
        assert digits.has_class("-warn") and unit.has_class("-warn")
        assert not digits.has_class("-ok") and not unit.has_class("-ok")
        assert restyled.count(digits) == 1 and restyled.count(unit) == 1
        await wait_for(pilot, lambda: settled(app), what="the warn colour to be painted")
        assert terminal.differences() == []
