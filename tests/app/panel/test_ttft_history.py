"""The chat's TTFT history: a sparkline readable from one value up (one bar per reply, heights
from zero, never stretched), the last two side by side with their cache state, and trimming's
change in TTFT labelled with whether the two sends were alike in cache."""

from __future__ import annotations

from helpers.app_pilot import WidgetsInApp

from tui.app.panel.ttft_history import BARS, TtftHistory, TtftSample, trim_gain
from tui.app.theme_colors import rich_colour
from tui.engine.metrics.record import Thresholds


def sample(
    ms: float, *, trimmed: bool = True, cached: int | None = None, tokens: int = 1000
) -> TtftSample:
    return TtftSample(ms, trimmed, True, tokens, 500.0, cached)


def bars(line: str) -> str:
    return "".join(c for c in line if c in BARS)


async def test_the_sparkline_has_one_bar_per_reply_from_one_value_up() -> None:
    history = TtftHistory(Thresholds())
    app = WidgetsInApp(history)
    async with app.run_test(size=(34, 6)):
        history.add(sample(200))
        assert bars(history.sparkline(34).plain) == "█"  # one value: one full bar
        history.add(sample(100))
        assert bars(history.sparkline(34).plain) == "█▄"  # in proportion, from zero
        history.add(sample(400))
        history.add(sample(300))
        line = history.sparkline(34).plain
        assert bars(line) == "▄▂█▆" and line.endswith("max 400 ms")


async def test_a_long_history_shows_the_newest_replies_that_fit() -> None:
    history = TtftHistory(Thresholds())
    app = WidgetsInApp(history)
    async with app.run_test(size=(34, 6)):
        for i in range(30):
            history.add(sample(100 + i))
        line = history.sparkline(34).plain
        assert len(line) <= 34 and len(bars(line)) == 34 - len("  max 129 ms")


async def test_bars_are_coloured_by_each_replys_own_verdict() -> None:
    history = TtftHistory(Thresholds(warn_ms=1200, error_ms=2500))
    app = WidgetsInApp(history)
    async with app.run_test(size=(34, 6)):
        history.add(sample(400))  # under its 500 ms target: met
        history.add(sample(800))  # over it: missed, though under ttft_warn_ms
        spans = history.sparkline(34).spans
        theme = app.current_theme
        expected = [rich_colour(theme.success, "?"), rich_colour(theme.warning, "?")]
        assert [str(span.style) for span in spans[:2]] == expected


def test_cache_labels_say_cold_or_warm_with_the_share_cached() -> None:
    assert sample(100, cached=None).cache_label == ""  # the server did not say
    assert sample(100, cached=3).cache_label == "cold"  # the template's opening only
    assert sample(100, cached=320).cache_label == "warm 32%"


def test_trimmings_change_says_whether_the_cache_made_the_two_unalike() -> None:
    off_cold = sample(8849, trimmed=False, cached=0, tokens=7352)
    on_warm = sample(4685, trimmed=True, cached=1838, tokens=5726)
    assert trim_gain(off_cold, on_warm).plain == "−47% with trim on · last warm"
    on_cold = sample(6902, trimmed=True, cached=0, tokens=5726)
    off_warm = sample(6632, trimmed=False, cached=1838, tokens=7352)
    assert trim_gain(on_cold, off_warm).plain == "−4% with trim off · last warm"
    both_cold = sample(4000, trimmed=True, cached=2, tokens=5726)
    assert trim_gain(off_cold, both_cold).plain.endswith("both cold")
    assert trim_gain(sample(100, trimmed=False), sample(50)).plain == "−50% with trim on"
