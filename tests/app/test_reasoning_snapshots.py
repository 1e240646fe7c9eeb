"""SVG snapshots of a reasoning model's reply: thinking as it streams, and collapsed above the
answer once it came (regenerate with `pytest --snapshot-update`). Figures are fixed as in
test_app_snapshots (its fixtures are used here)."""

from __future__ import annotations

import pytest
from helpers.app_pilot import make_app, replies, send, send_and_wait, wait_for, wait_ready
from test_app_snapshots import SIZE, fixed_figures, settle, warm_imports

from tui.demo import DemoThread

pytestmark = pytest.mark.e2e

__all__ = ["fixed_figures", "warm_imports"]  # the fixtures apply here too

REASONING = "firsttoken-demo-reasoning"


def test_reasoning_streaming(snap_compare, demo: DemoThread):
    # The demo pauses for 10 minutes after the fifth token: five tokens of thinking, still.
    app = make_app(
        f"{demo.root_url}/fault/stall-600000/v1",
        model=REASONING,
        chunk_timeout_ms=900_000,
        stall_timeout_ms=900_000,
        timeout_seconds=900,
    )

    async def run_before(pilot):
        await wait_ready(pilot)
        await send(pilot, "Why is the sky blue?")
        await wait_for(
            pilot,
            lambda: (
                app.chat_screen.turn.current is not None
                and app.chat_screen.turn.current.state.tokens >= 5
                and replies(app)[-1].reasoning is not None
                and len(replies(app)[-1].reasoning.text.split()) >= 4
            ),
            what="five tokens of thinking on screen",
        )
        await pilot.pause(0.3)  # the panel's tick and the block's poll
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_reasoning_collapsed(snap_compare, paced_demo: DemoThread):
    # Paced: each token its own packet, so the per-token figures are measured (and fixed).
    app = make_app(paced_demo.base_url, model=REASONING)

    async def run_before(pilot):
        await wait_ready(pilot)
        await send_and_wait(pilot, "Why is the sky blue?")
        block = replies(app)[-1].reasoning
        assert block is not None and block.collapsed
        block.thought_s = 0.7  # measured on the wall clock: fixed for the picture
        block.show_header()
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
