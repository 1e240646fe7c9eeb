"""The side panel's widgets arrive after the first frame; what was shown before is not lost."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from tui.app.panel.latency_panel import LatencyPanel
from tui.engine.metrics.record import Thresholds


class PanelApp(App[None]):
    def compose(self) -> ComposeResult:
        yield LatencyPanel(Thresholds(warn_ms=500, error_ms=1500), id="panel")


async def test_calls_before_fill_are_applied_after_it_in_order() -> None:
    app = PanelApp()
    async with app.run_test(size=(40, 40)) as pilot:
        panel = app.query_one(LatencyPanel)
        assert not panel.filled and not panel.children  # nothing composed for the first frame
        panel.show_endpoint("model-a", "first.example", simulated=False)
        panel.show_endpoint("model-b", "second.example", simulated=True)  # the later one wins
        panel.show_idle()
        await panel.fill()
        await pilot.pause()
        assert panel.filled
        endpoint = str(panel.query_one("#endpoint", Static).content)
        assert "model-b" in endpoint and "second.example" in endpoint and "simulated" in endpoint
        assert "send a message" in str(panel.query_one("#ttft-note", Static).content)
        await panel.fill()  # a second fill mounts nothing twice
        assert len(panel.query("#endpoint")) == 1
