"""SVG snapshots of the app's key states (regenerate with `pytest --snapshot-update`).

Wall-clock figures never reach a snapshot: the `fixed_figures` fixture passes finished
requests through `fixed_record` and the live panel's figures through `fixed_live` where the
app receives them, and shows the endpoint under a fixed host label.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from helpers.app_pilot import (
    WidgetsInApp,
    fixed_live,
    fixed_record,
    make_app,
    pick_theme,
    replies,
    send,
    send_and_wait,
    wait_for,
    wait_ready,
)

import tui.app.chat.reply_turn
import tui.app.screens.chat_screen
from tui.app.app import FirstTokenApp
from tui.app.chat.chat_log import ChatLog
from tui.app.chat.prompt_input import PromptInput
from tui.app.panel.budget_gauge import BudgetFigures
from tui.app.panel.latency_panel import LatencyPanel
from tui.app.panel.ttft_history import TtftSample
from tui.demo import DemoThread, start_demo_in_thread
from tui.demo.latency_model import latency_model
from tui.engine.metrics.record import RequestRecord, Thresholds
from tui.session.turn import Turn

SIZE = (130, 40)


@pytest.fixture(scope="module", autouse=True)
def warm_imports() -> None:
    """Import what the app's warm-up thread imports, before the first snapshot: otherwise
    the first test of a pytest run renders while that thread holds the GIL, and
    its cached lines group into SVG runs differently from every later test's."""
    from tui.app.chat.message_view import warm_up_markdown
    from tui.engine.chat import client, request_builder  # noqa: F401
    from tui.engine.tokens.counter import get_counter

    get_counter().load()
    warm_up_markdown()


@pytest.fixture(autouse=True)
def fixed_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixed figures where the app takes them in: the runner's outcome, the live figures
    the panel's tick computes, the endpoint's host."""
    outcome = Turn.outcome
    live_figures = tui.app.chat.reply_turn.live_figures

    async def fixed_outcome(turn: Turn) -> Any:
        finished = await outcome(turn)
        return dataclasses.replace(finished, record=fixed_record(finished.record))

    monkeypatch.setattr(Turn, "outcome", fixed_outcome)
    monkeypatch.setattr(
        tui.app.chat.reply_turn, "live_figures", lambda *args: fixed_live(live_figures(*args))
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


@pytest.mark.e2e
def test_empty_app(snap_compare, demo: DemoThread):
    async def run_before(pilot):
        await wait_ready(pilot)
        await settle(pilot)

    assert snap_compare(snapshot_app(demo.base_url), terminal_size=SIZE, run_before=run_before)


@pytest.mark.e2e
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
                app.chat_screen.turn.current is not None
                and app.chat_screen.turn.current.state.tokens >= 5
                and not app.chat_screen.turn.writer._pending
                and "reply (" in replies(app)[-1].source
            ),
            what="five tokens on screen",
        )
        await pilot.pause(0.3)  # let the panel's timer tick and the last write land
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.e2e
def test_finished_reply_with_metrics(snap_compare, paced_demo: DemoThread):
    app = snapshot_app(paced_demo.base_url)

    async def run_before(pilot):
        await wait_ready(pilot)
        await send_and_wait(pilot, "What is TTFT? reply 60 tokens")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.e2e
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


@pytest.mark.e2e
def test_error_block(snap_compare, demo: DemoThread):
    app = snapshot_app(f"{demo.root_url}/fault/500/v1", max_retries=0)

    async def run_before(pilot):
        await wait_ready(pilot)
        await send_and_wait(pilot, "Is anyone there?")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.e2e
def test_light_theme(snap_compare, paced_demo: DemoThread):
    app = snapshot_app(paced_demo.base_url)

    async def run_before(pilot):
        app.theme = "firsttoken-light"
        await wait_ready(pilot)
        await send_and_wait(pilot, "Show me some code, reply 80 tokens")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.e2e
@pytest.mark.parametrize("theme", ["ansi-light", "ansi-dark"])
def test_ansi_theme_picked_with_f4(snap_compare, paced_demo: DemoThread, theme: str):
    # Textual's ANSI themes name colours ("ansi_magenta") that Rich styles cannot take.
    app = snapshot_app(paced_demo.base_url)

    async def run_before(pilot):
        await wait_ready(pilot)
        await send_and_wait(pilot, "Show me some code, reply 80 tokens")
        await pick_theme(pilot, theme)
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.fixture
def llamacpp_demo() -> Any:
    """The demo playing llama.cpp's server: `timings`, cached prompt tokens, its prefix cache."""
    overrides = {"server": "llamacpp", "prefix_cache": True, "decode_tokens_per_s": 400.0}
    thread = start_demo_in_thread(latency_model("instant", overrides))
    try:
        yield thread
    finally:
        thread.stop()


@pytest.mark.e2e
def test_panel_after_a_long_chat(snap_compare, llamacpp_demo: DemoThread):
    # Every section of the panel on screen at 130x36 after many replies, "simulated" included.
    app = snapshot_app(llamacpp_demo.base_url)

    async def run_before(pilot):
        await wait_ready(pilot)
        for turn in range(8):
            await send_and_wait(pilot, f"question {turn}, reply 12 tokens")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(130, 36), run_before=run_before)


@pytest.mark.e2e
def test_narrow_layout(snap_compare, paced_demo: DemoThread):
    # 80x24: the panel collapses, and the title still says the figures are simulated.
    app = snapshot_app(paced_demo.base_url)

    async def run_before(pilot):
        await wait_ready(pilot)
        await send_and_wait(pilot, "What is TTFT? reply 30 tokens")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def waterfall_record() -> RequestRecord:
    """A reply from a llama.cpp server over a new connection, with reasoning and a pause."""
    record = RequestRecord(model="m", endpoint_host="h", streamed=True, simulated=True)
    record.phases_ms = {
        "connect": 2.1,
        "request_sent": 0.4,
        "response_head": 180.0,
        "first_byte": 20.0,
        "first_token": 95.5,
    }
    record.connection_reused = False
    record.ttfb_ms, record.ttft_ms, record.total_ms = 202.5, 298.0, 2310.0
    record.tpot_ms, record.output_tokens_per_s, record.output_tokens = 16.8, 59.5, 121
    record.server = {"prompt_tokens": 5950, "cached_tokens": 5200, "prefill_ms": 240.0}
    record.request_class, record.ttft_target_ms, record.target_met = "short_qa", 500.0, True
    record.time_to_first_answer_ms, record.reasoning_tokens = 1250.0, 64
    record.pauses, record.longest_gap_ms = 1, 1060.0
    return record


def test_waterfall_and_the_figures_of_one_reply(snap_compare):
    class PanelApp(WidgetsInApp):
        async def on_mount(self) -> None:
            panel = self.query_one(LatencyPanel)
            await panel.fill()
            panel.show_record(waterfall_record())
            panel.show_prompt(5950, True, actual=5950)
            panel.show_budget(BudgetFigures(8204, 5950, 6000, 2000, exact=True, trimming=True))
            panel.show_switches(
                trimming=True, streaming=True, strategy="priority", budget=6000, reserve=2000
            )
            panel.add_sample(TtftSample(9920.0, False, True, 8204, 2000.0, 0))
            panel.add_sample(TtftSample(298.0, True, True, 5950, 500.0, 5200))
            panel.show_endpoint("gemma-3-270m", "127.0.0.1:8080", simulated=True)

    app = PanelApp(LatencyPanel(Thresholds(), id="panel"))
    assert snap_compare(app, terminal_size=(40, 36))


def sample_sent_to_llamacpp(
    snap_compare, prefill_ms_per_token: float, until: Callable[[FirstTokenApp], bool], what: str
) -> bool:
    """The F6 sample sent to the demo playing llama-server at this prefill speed, the
    snapshot taken once `until` holds."""
    overrides = {
        "server": "llamacpp",
        "prefill_ms_per_token": prefill_ms_per_token,
        "decode_tokens_per_s": 400.0,
    }
    demo = start_demo_in_thread(latency_model("instant", overrides))
    app = snapshot_app(demo.base_url, llamacpp=True)

    async def run_before(pilot):
        await wait_ready(pilot)
        await pilot.press("f6")
        await pilot.press("enter")
        await wait_for(pilot, lambda: until(app), timeout=60, what=what)
        await settle(pilot)

    try:
        return bool(snap_compare(app, terminal_size=SIZE, run_before=run_before))
    finally:
        demo.stop()


@pytest.mark.e2e
def test_panel_during_a_long_prefill(snap_compare):
    # A llama.cpp server computing the F6 sample's prompt: the bar, the counts, the rate and
    # the first token's ETA under the live TTFT counter (figures fixed by `fixed_live`); at
    # 1 s a token no first token comes within the test.
    assert sample_sent_to_llamacpp(
        snap_compare,
        1000.0,
        lambda app: "first token ~" in str(app.query_one("#timings").content),
        "the prefill in the panel",
    )


@pytest.mark.e2e
def test_panel_after_a_long_prefill(snap_compare):
    # The same prompt once its reply is in: the server's prefill rate among the record's notes.
    assert sample_sent_to_llamacpp(
        snap_compare,
        0.25,
        lambda app: app.chat_screen.last_record is not None and not app.chat_screen.busy,
        "the reply",
    )
