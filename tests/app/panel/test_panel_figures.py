"""What the panel says about a finished reply and one under way: one verdict (the class target
colours TTFT), cached prompt tokens, time to the first answer and thinking tokens, pauses
live and the longest gap after, a buffered stream with its fix."""

from __future__ import annotations

from typing import Any

from helpers.app_pilot import WidgetsInApp
from textual.widgets import Static

from tui.app.panel.latency_panel import LatencyPanel
from tui.app.panel.live_figures import LiveFigures
from tui.engine.metrics.record import RequestClass, RequestRecord, Thresholds
from tui.engine.metrics.request_classes import ClassChoice

THRESHOLDS = Thresholds(warn_ms=1200.0, error_ms=2500.0)


def record(**figures: Any) -> RequestRecord:
    shown = RequestRecord(model="m", endpoint_host="h", streamed=True)
    shown.ttfb_ms, shown.total_ms, shown.output_tokens = 90.0, 2600.0, 40
    for name, value in figures.items():
        setattr(shown, name, value)
    return shown


def text(panel: LatencyPanel, widget_id: str) -> str:
    return str(panel.query_one(f"#{widget_id}", Static).content)


async def filled_panel(app: WidgetsInApp) -> LatencyPanel:
    panel = app.query_one(LatencyPanel)
    await panel.fill()
    return panel


def long_generation(ttft_ms: float) -> RequestRecord:
    return record(
        ttft_ms=ttft_ms,
        request_class="long_generation",
        ttft_target_ms=2000.0,
        target_met=ttft_ms <= 2000.0,
    )


async def test_one_verdict_the_class_target_colours_ttft() -> None:
    app = WidgetsInApp(LatencyPanel(THRESHOLDS, id="panel"))
    async with app.run_test(size=(40, 40)) as pilot:
        panel = await filled_panel(app)
        digits = panel.query_one("#ttft")
        panel.show_record(long_generation(2010.0))  # over its target, under ttft_error_ms
        await pilot.pause()
        assert digits.has_class("-warn") and "✗ missed" in text(panel, "ttft-note")
        panel.show_record(long_generation(1500.0))  # over ttft_warn_ms, within its target
        await pilot.pause()
        assert digits.has_class("-ok") and "✓ met" in text(panel, "ttft-note")
        short = record(ttft_ms=800.0, request_class="short_qa", ttft_target_ms=500.0)
        short.target_met = False
        panel.show_record(short)
        await pilot.pause()
        assert digits.has_class("-warn") and "short_qa ≤ 500 ms ✗ missed" in text(
            panel, "ttft-note"
        )


async def test_the_live_counter_has_the_same_verdict_as_the_record_will() -> None:
    app = WidgetsInApp(LatencyPanel(THRESHOLDS, id="panel"))
    expected = ClassChoice(RequestClass("long_generation", 2000.0), "asks to write")
    async with app.run_test(size=(40, 40)) as pilot:
        panel = await filled_panel(app)
        digits = panel.query_one("#ttft")
        waiting = LiveFigures(1500.0, None, None, 0, 0.0, 0, True)
        panel.show_live(waiting, expected)
        await pilot.pause()
        assert digits.has_class("-ok") and "long_generation ≤ 2.00 s" in text(panel, "ttft-note")
        panel.show_live(LiveFigures(2100.0, None, None, 0, 0.0, 0, True), expected)
        await pilot.pause()
        assert digits.has_class("-warn") and "✗ missed" in text(panel, "ttft-note")


async def test_cached_tokens_thinking_and_the_longest_gap_of_a_finished_reply() -> None:
    app = WidgetsInApp(LatencyPanel(THRESHOLDS, id="panel"))
    async with app.run_test(size=(40, 40)) as pilot:
        panel = await filled_panel(app)
        panel.show_record(
            record(
                ttft_ms=300.0,
                time_to_first_answer_ms=1250.0,
                reasoning_tokens=80,
                server={"prompt_tokens": 5950, "cached_tokens": 5200},
                longest_gap_ms=1060.0,
                pauses=2,
            )
        )
        await pilot.pause()
        timings = text(panel, "timings")
        assert "cached 5,200 of 5,950" in timings
        assert "answer 1.25 s" in text(panel, "ttft-label")  # beside TTFT
        assert "thinking 80 tok" in timings
        assert "gap    1.06 s" in timings
        assert "2 pauses, the reply went on" in timings
        panel.show_record(record(ttft_ms=300.0, time_to_first_answer_ms=300.0))
        await pilot.pause()
        timings = text(panel, "timings")
        assert "thinking" not in timings and "cached" not in timings and "pause" not in timings
        assert "answer" not in text(panel, "ttft-label")  # no reasoning: the answer is TTFT


async def test_a_pause_is_shown_while_it_lasts() -> None:
    app = WidgetsInApp(LatencyPanel(THRESHOLDS, id="panel"))
    async with app.run_test(size=(40, 40)) as pilot:
        panel = await filled_panel(app)
        paused = LiveFigures(3000.0, 90.0, 120.0, 24, 1.6, 0, True, paused_ms=1200.0)
        panel.show_live(paused)
        await pilot.pause()
        assert "no token for 1.2 s…" in text(panel, "timings")
        panel.show_live(LiveFigures(3100.0, 90.0, 120.0, 25, 2.9, 0, True))
        await pilot.pause()
        assert "no token" not in text(panel, "timings")


async def test_a_buffered_stream_is_said_with_the_fix() -> None:
    app = WidgetsInApp(LatencyPanel(THRESHOLDS, id="panel"))
    async with app.run_test(size=(40, 40)) as pilot:
        panel = await filled_panel(app)
        panel.show_record(record(ttft_ms=2590.0, buffered=True))
        await pilot.pause()
        timings = text(panel, "timings")
        assert "buffered" in timings and "proxy_buffering off" in timings
        assert "X-Accel-Buffering: no" in timings


async def test_the_panels_labels_explain_the_figures_in_the_readmes_words() -> None:
    app = WidgetsInApp(LatencyPanel(THRESHOLDS, id="panel"))
    async with app.run_test(size=(40, 40)):
        panel = await filled_panel(app)
        timings = str(panel.query_one("#timings").tooltip)
        assert "TPOT: time per output token after the first: (total - TTFT)" in timings
        assert "TTFB: time to first byte" in timings and "tok/s:" in timings
        assert "network + queue" in str(panel.query_one("#waterfall").tooltip)
        assert "class" in str(panel.query_one("#ttft-note").tooltip)
        assert "local estimate (≈)" in str(panel.query_one("#budget").tooltip)


async def test_a_reasoning_replys_answer_is_shown_beside_ttft_while_it_streams() -> None:
    app = WidgetsInApp(LatencyPanel(THRESHOLDS, id="panel"))
    async with app.run_test(size=(40, 40)) as pilot:
        panel = await filled_panel(app)
        thinking = LiveFigures(900.0, 90.0, 120.0, 30, 0.7, 0, True, thinking=True)
        panel.show_live(thinking)
        await pilot.pause()
        assert "thinking…" in text(panel, "ttft-label")
        answering = LiveFigures(1400.0, 90.0, 120.0, 60, 1.2, 0, True, answer_ms=1250.0)
        panel.show_live(answering)
        await pilot.pause()
        assert "answer 1.25 s" in text(panel, "ttft-label")
