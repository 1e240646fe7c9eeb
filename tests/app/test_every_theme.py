"""Every theme F4 offers draws the whole app (Textual's light and ANSI ones included), and a
remembered theme that cannot be used gives way to the default instead of ending the app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.app_pilot import (
    demo_endpoint,
    firsttoken_app,
    make_app,
    pick_theme,
    send_and_wait,
    wait_ready,
)

from tui.app.app import FirstTokenApp
from tui.app.preferences import Preferences
from tui.app.themes import DEFAULT_THEME
from tui.demo import DemoThread

pytestmark = pytest.mark.e2e


def drawn(app: FirstTokenApp) -> str:
    """The whole screen rendered as the terminal gets it (a style Rich cannot parse raises)."""
    return app.export_screenshot()


async def test_every_theme_f4_offers_draws_a_reply_and_its_figures(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "hello, reply 30 tokens")  # the panel has every figure
        names = sorted(app.available_themes)
        assert {"ansi-light", "ansi-dark", "textual-light", "firsttoken-light"} <= set(names)
        for name in names:
            await pick_theme(pilot, name)
            record = await send_and_wait(pilot, f"in {name}, reply 12 tokens")
            assert record.status.value == "ok", name
            assert drawn(app), name
            assert app.preferences.theme == name  # kept once a frame was drawn with it
    assert app.return_code in (0, None)


async def test_a_remembered_ansi_light_theme_starts_and_shows_a_reply(
    demo: DemoThread, isolated_home: Path
) -> None:
    Preferences(theme="ansi-light").save()
    base = make_app(demo.base_url)
    app = firsttoken_app(base.config, demo_endpoint(demo), remember=True)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        assert app.theme == "ansi-light"
        await send_and_wait(pilot, "hello, reply 20 tokens")
        assert drawn(app)
    assert Preferences.load().theme == "ansi-light"


async def test_a_remembered_theme_that_is_gone_gives_way_to_the_default_and_is_forgotten(
    demo: DemoThread, isolated_home: Path
) -> None:
    Preferences(theme="mine-deleted").save()
    base = make_app(demo.base_url)
    app = firsttoken_app(base.config, demo_endpoint(demo), remember=True)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        assert app.theme == DEFAULT_THEME
        notices = [n.message for n in app._notifications]
        said = [m for m in notices if "mine-deleted" in m]
        assert len(said) == 1 and "\n" not in said[0] and DEFAULT_THEME in said[0], notices
    saved = json.loads(Preferences.default_path().read_text(encoding="utf-8"))
    assert saved["theme"] is None
