"""SVG snapshots of the app's key states (regenerate with `pytest --snapshot-update`).

Wall-clock figures never reach a snapshot: the `fixed_figures` fixture passes finished
requests through `fixed_record` and the live panel's figures through `fixed_live` where the
app receives them, and shows the endpoint under a fixed host label.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from app_helpers import (
    fixed_live,
    fixed_record,
    make_app,
    replies,
    send,
    send_and_wait,
    wait_for,
    wait_ready,
)

import tui.app.reply_turn
import tui.app.screens.chat_screen
from tui.app.app import FirstTokenApp
from tui.app.request_runner import RequestRunner
from tui.app.widgets.chat_log import ChatLog
from tui.app.widgets.prompt_input import PromptInput
from tui.demo import DemoThread

SIZE = (130, 40)


@pytest.fixture(scope="module", autouse=True)
def warm_imports() -> None:
    """Import what the app's warm-up thread imports, before the first snapshot: otherwise
    the first test of a session renders while that thread holds the GIL for a second, and
    its cached lines group into SVG runs differently from every later test's."""
    from tui.app.widgets.message_view import warm_up_markdown
    from tui.engine import client, request_builder  # noqa: F401
    from tui.engine.tokens import get_counter

    get_counter().load()
    warm_up_markdown()


@pytest.fixture(autouse=True)
def fixed_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixed figures where the app takes them in: the runner's outcome, the live figures
    the panel's tick computes, the endpoint's host."""
    run = RequestRunner.run
    live_figures = tui.app.reply_turn.live_figures

    async def fixed_run(runner: RequestRunner, ready: Any = None) -> Any:
        finished = await run(runner, ready)
        return dataclasses.replace(finished, record=fixed_record(finished.record))

    monkeypatch.setattr(RequestRunner, "run", fixed_run)
    monkeypatch.setattr(
        tui.app.reply_turn, "live_figures", lambda *args: fixed_live(live_figures(*args))
    )
    monkeypatch.setattr(
        tui.app.screens.chat_screen, "host_label", lambda engine, config: "demo.local:8000"
    )


def snapshot_app(base_url: str, **overrides: Any) -> FirstTokenApp:
    return make_app(base_url, **overrides)


async def settle(pilot: Any) -> None:
    app = pilot.app
    app.clear_notifications()
    # Focus is part of the picture (focused borders are brighter): pin it.
    app.app_focus = True
    prompt = app.query_one(PromptInput)
    prompt.focus()
    # A steady cursor: a blinking one would be on or off depending on timing.
    prompt.set_blinking(False)
    await pilot.pause(0.2)
    await pilot.wait_for_scheduled_animations()


def test_empty_app(snap_compare, demo: DemoThread):
    async def run_before(pilot):
        await wait_ready(pilot)
        await settle(pilot)

    assert snap_compare(snapshot_app(demo.base_url), terminal_size=SIZE, run_before=run_before)


def test_reply_streaming(snap_compare, demo: DemoThread):
    # The demo pauses for 10 minutes after the fifth token: a still, mid-stream frame.
    app = snapshot_app(
        f"{demo.root_url}/fault/stall-600000/v1", chunk_timeout_ms=900_000, timeout_seconds=900
    )

    async def run_before(pilot):
        await wait_ready(pilot)
        await send(pilot, "Why does a long prompt slow the first token?")
        await wait_for(
            pilot,
            lambda: (
                app.chat_screen.turn.runner is not None
                and app.chat_screen.turn.runner.state.tokens >= 5
                and not app.chat_screen.turn.runner.writer._pending
                and "reply (" in replies(app)[-1].source
            ),
            what="five tokens on screen",
        )
        await pilot.pause(0.3)  # let the panel's timer tick and the last write land
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_finished_reply_with_metrics(snap_compare, paced_demo: DemoThread):
    app = snapshot_app(paced_demo.base_url)

    async def run_before(pilot):
        await wait_ready(pilot)
        await send_and_wait(pilot, "What is TTFT? reply 60 tokens")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_trimming_preview(snap_compare, demo: DemoThread):
    app = snapshot_app(demo.base_url)

    async def run_before(pilot):
        await wait_ready(pilot)
        await pilot.press("f6")
        await wait_for(pilot, lambda: bool(app.query(".-dropped")), what="dropped markers")
        await pilot.press(*"and what about retries?")
        await pilot.pause(0.3)  # the debounced preview
        first_dropped = app.query(".-dropped").first()
        app.query_one(ChatLog).scroll_to_widget(first_dropped, animate=False, top=True)
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_error_block(snap_compare, demo: DemoThread):
    app = snapshot_app(f"{demo.root_url}/fault/500/v1", max_retries=0)

    async def run_before(pilot):
        await wait_ready(pilot)
        await send_and_wait(pilot, "Is anyone there?")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_light_theme(snap_compare, paced_demo: DemoThread):
    app = snapshot_app(paced_demo.base_url)

    async def run_before(pilot):
        app.theme = "firsttoken-light"
        await wait_ready(pilot)
        await send_and_wait(pilot, "Show me some code, reply 80 tokens")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
