"""Toasts stack above the prompt, never over it: at 80x24 the demo endpoint's start-up notice
left half the prompt hidden for eight seconds, the first thing a new user types into."""

from __future__ import annotations

import pytest
from helpers.app_pilot import firsttoken_app, make_app, wait_for, wait_ready
from textual.geometry import Region

from tui.app.chat.prompt_input import PromptInput
from tui.demo import DemoThread
from tui.wiring import Endpoint

pytestmark = pytest.mark.e2e

NOTICE = (
    "No API key or base_url configured: using the embedded demo endpoint at "
    "http://127.0.0.1:45678/v1 (simulated latency, preset cpu-small)."
)


def toast_regions(app: object) -> list[Region]:
    """Where each toast on screen is (Toast by its CSS type: its class is Textual's own)."""
    return [toast.region for toast in app.screen.query("Toast")]  # type: ignore[attr-defined]


@pytest.mark.parametrize("size", [(80, 24), (130, 40)])
async def test_the_start_up_notice_leaves_the_prompt_clear(
    demo: DemoThread, size: tuple[int, int]
) -> None:
    base = make_app(demo.base_url)
    endpoint = Endpoint(base_url=demo.base_url, api_key="demo", simulated=True, notice=NOTICE)
    app = firsttoken_app(base.config, endpoint)
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: bool(toast_regions(app)), what="the notice")
        await pilot.pause(0.1)
        prompt = app.query_one(PromptInput).region
        assert all(not region.overlaps(prompt) for region in toast_regions(app))
        # A prompt of several lines is taller: the toasts move up with it.
        await pilot.press(*"one", "ctrl+j", *"two", "ctrl+j", *"three")
        app.notify("trimming on for the next request")
        await pilot.pause(0.2)
        prompt = app.query_one(PromptInput).region
        assert prompt.height > 3
        assert all(not region.overlaps(prompt) for region in toast_regions(app))
