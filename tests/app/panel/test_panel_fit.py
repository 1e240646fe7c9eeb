"""The side panel collapses on narrow terminals; F10's choice holds until the terminal crosses
the narrow width, then the width decides again (one F10 press does not end auto-collapse)."""

from __future__ import annotations

import pytest
from helpers.app_pilot import make_app, wait_ready

from tui.app.panel.latency_panel import LatencyPanel
from tui.app.panel.panel_fit import PanelFit
from tui.app.screens.chat_screen import NARROW_WIDTH
from tui.demo import DemoThread


def test_the_width_decides_until_the_user_chooses() -> None:
    fit = PanelFit(100)
    assert fit.visible(130) and not fit.visible(80)
    assert fit.toggle(130, shown=True) is False  # F10 on a wide terminal hides it
    assert not fit.visible(120)  # still the user's choice on the wide side
    assert not fit.visible(80)  # narrow: the width's answer anyway, and the choice is gone
    assert fit.visible(130)  # wide again: auto-collapse works as before F10


def test_a_panel_shown_on_a_narrow_terminal_stays_until_it_widens() -> None:
    fit = PanelFit(100)
    assert fit.toggle(80, shown=False) is True
    assert fit.visible(90)
    assert fit.visible(130)  # crossing drops the choice: the width shows it
    assert not fit.visible(80)  # and collapses it again


def test_a_panel_hidden_in_an_earlier_run_stays_hidden_on_a_wide_terminal() -> None:
    fit = PanelFit(100, collapsed_by_choice=True)
    assert not fit.visible(130)
    assert not fit.visible(80)
    assert fit.visible(130)  # the terminal crossed the rule: auto again


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
