"""The side panel collapses on narrow terminals; F10's choice is kept per width class (narrow,
wide), in the run and the next one, and the footer names F10 while the panel is hidden."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.app_pilot import demo_endpoint, firsttoken_app, make_app, wait_ready
from textual.widgets import Footer

from tui.app.app import FirstTokenApp
from tui.app.panel.latency_panel import LatencyPanel
from tui.app.panel.panel_fit import PanelFit
from tui.app.preferences import Preferences
from tui.app.screens.chat_screen import NARROW_WIDTH
from tui.demo import DemoThread

NARROW, WIDE = 80, 160


def test_the_width_decides_until_the_user_chooses() -> None:
    fit = PanelFit(100)
    assert fit.visible(130) and not fit.visible(80)
    assert fit.toggle(130, shown=True) is False  # F10 on a wide terminal hides it
    assert not fit.visible(120)  # still the user's choice on the wide side
    assert not fit.visible(80)  # narrow: no choice there, the width's answer
    assert not fit.visible(130)  # wide again: the wide side's choice


def test_a_choice_on_a_narrow_terminal_says_nothing_of_a_wide_one() -> None:
    fit = PanelFit(100)
    assert fit.toggle(80, shown=False) is True  # shown at 80 columns
    assert fit.toggle(80, shown=True) is False  # and hidden again
    assert fit.chosen == {"narrow": False}
    assert fit.visible(160)  # the width's answer on the wide side
    assert not fit.visible(80)


def test_choices_kept_from_an_earlier_run_hold_per_width() -> None:
    fit = PanelFit(100, {"narrow": True, "wide": False, "huge": True})
    assert fit.visible(80) and not fit.visible(160)
    assert fit.chosen == {"narrow": True, "wide": False}  # an unknown class is dropped


def footer_keys(app: FirstTokenApp) -> list[str]:
    """The keys the footer shows, in order."""
    active = app.chat_screen.active_bindings
    return [key for key, item in active.items() if item.binding.show]


async def start(demo: DemoThread, width: int):  # type: ignore[no-untyped-def]
    base = make_app(demo.base_url)
    app = firsttoken_app(base.config, demo_endpoint(demo), remember=True)
    return app, app.run_test(size=(width, 30))


@pytest.mark.e2e
async def test_f10_twice_at_80_columns_leaves_the_panel_at_160_columns(
    demo: DemoThread, isolated_home: Path
) -> None:
    app, running = await start(demo, NARROW)
    async with running as pilot:
        await wait_ready(pilot)
        panel = app.query_one(LatencyPanel)
        assert not panel.display
        await pilot.press("f10")
        assert panel.display
        await pilot.press("f10")
        assert not panel.display
    assert Preferences.load().side_panel == {"narrow": False}
    app, running = await start(demo, WIDE)  # the next run, on a wide terminal
    async with running as pilot:
        await wait_ready(pilot)
        assert app.query_one(LatencyPanel).display
        assert "f10" not in footer_keys(app)


@pytest.mark.e2e
async def test_a_panel_hidden_on_a_wide_terminal_stays_hidden_there_and_the_footer_says_f10(
    demo: DemoThread, isolated_home: Path
) -> None:
    app, running = await start(demo, WIDE)
    async with running as pilot:
        await wait_ready(pilot)
        await pilot.press("f10")
        assert not app.query_one(LatencyPanel).display
    app, running = await start(demo, WIDE)
    async with running as pilot:
        await wait_ready(pilot)
        assert not app.query_one(LatencyPanel).display
        await pilot.pause()
        assert footer_keys(app)[0] == "f10"  # first: the way back, however narrow the footer
        footer = app.query_one(Footer)
        assert "panel" in " ".join(str(item.render()) for item in footer.children)
        await pilot.resize_terminal(NARROW, 30)
        await pilot.pause()
        assert not app.query_one(LatencyPanel).display  # narrow: hidden by the width
        await pilot.press("f10")
        assert app.query_one(LatencyPanel).display
        assert "f10" not in footer_keys(app)
    assert Preferences.load().side_panel == {"wide": False, "narrow": True}


@pytest.mark.e2e
async def test_f10_then_resizing_collapses_and_restores_the_panel(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 36)) as pilot:
        await wait_ready(pilot)
        panel = app.query_one(LatencyPanel)
        assert panel.display
        await pilot.press("f10")
        assert not panel.display
        await pilot.press("f10")
        assert panel.display
        await pilot.resize_terminal(NARROW_WIDTH - 20, 24)
        await pilot.pause()
        assert not panel.display  # auto-collapse still works after F10
        await pilot.resize_terminal(130, 36)
        await pilot.pause()
        assert panel.display
