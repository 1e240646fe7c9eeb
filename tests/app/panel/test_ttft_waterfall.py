"""The waterfall draws the engine's TTFT parts in proportion, names every part with its time,
and says "reused" for a request that went over a kept connection."""

from __future__ import annotations

from helpers.app_pilot import WidgetsInApp
from hypothesis import given
from hypothesis import strategies as st

from tui.app.panel.ttft_waterfall import GLYPHS, TtftWaterfall, WaterfallFigures, cells_for
from tui.engine.metrics.anatomy import CLIENT, REMAINDER, SERVER, ttft_anatomy
from tui.engine.metrics.record import RequestRecord


def llamacpp_record(*, reused: bool) -> RequestRecord:
    """A streamed reply whose server reported its prefill (llama.cpp's timings)."""
    phases = {"request_sent": 0.5, "response_head": 3.0, "first_byte": 0.5, "first_token": 236.0}
    if not reused:
        phases = {"connect": 12.0, **phases}
    record = RequestRecord(model="m", endpoint_host="h", streamed=True)
    record.ttft_ms = sum(phases.values())
    record.phases_ms = phases
    record.connection_reused = reused
    record.server = {"prefill_ms": 180.0, "cached_tokens": 10, "prompt_tokens": 160}
    return record


def test_cells_follow_the_times_and_fill_the_width() -> None:
    assert cells_for([10.0, 30.0, 60.0], 10) == [1, 3, 6]
    assert cells_for([0.1, 99.9], 20) == [0, 20]  # too short for a cell: named in the legend
    assert cells_for([0.0, 0.0], 8) == [0, 0]


@given(st.lists(st.floats(min_value=-5, max_value=1e6), min_size=1, max_size=8), st.integers(1, 80))
def test_cells_always_add_up_to_the_width(times: list[float], width: int) -> None:
    cells = cells_for(times, width)
    if sum(max(0.0, t) for t in times) > 0:
        assert sum(cells) == width
    assert all(c >= 0 for c in cells)
    assert all(c == 0 for t, c in zip(times, cells, strict=True) if t <= 0)


async def test_parts_are_drawn_in_proportion_and_named_with_their_times() -> None:
    waterfall = TtftWaterfall()
    app = WidgetsInApp(waterfall)
    async with app.run_test(size=(34, 6)) as pilot:
        record = llamacpp_record(reused=False)
        anatomy = ttft_anatomy(record)
        assert anatomy is not None
        waterfall.show(WaterfallFigures(anatomy, record.connection_reused))
        await pilot.pause()
        bar, *legend = str(waterfall.content).split("\n")
        assert len(bar) == 34
        # connection + request (client), prefill (server), the rest: 252 - 12.5 - 180 ms
        assert bar.count(GLYPHS[CLIENT]) == round(12.5 / 252 * 34)
        assert bar.count(GLYPHS[SERVER]) == round(180 / 252 * 34)
        assert bar.count(GLYPHS[REMAINDER]) == 34 - bar.count(GLYPHS[CLIENT]) - bar.count(
            GLYPHS[SERVER]
        )
        names = " ".join(legend)
        for shown in ("connect 12ms", "send 0.5ms", "prefill 180ms", "net+queue 60ms"):
            assert shown in names
        assert "reused" not in names


async def test_a_kept_connection_is_shown_as_reused_and_the_legend_keeps_three_lines() -> None:
    waterfall = TtftWaterfall()
    app = WidgetsInApp(waterfall)
    async with app.run_test(size=(34, 6)) as pilot:
        record = llamacpp_record(reused=True)
        anatomy = ttft_anatomy(record)
        assert anatomy is not None
        waterfall.show(WaterfallFigures(anatomy, True))
        await pilot.pause()
        lines = str(waterfall.content).split("\n")
        assert "reused" in lines[1] and "connect" not in " ".join(lines)
        assert waterfall.size.height == 3
        waterfall.show_pending("waiting for the first token…")
        await pilot.pause()
        assert "waiting for the first token" in str(waterfall.content)
        assert waterfall.size.height == 3  # the sections below do not move
