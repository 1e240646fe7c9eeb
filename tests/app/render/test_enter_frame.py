"""Enter's frame is held for the first words, never longer than the deadline, never forever;
it carries the chat's changes, and the panel's follow it."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.app_pilot import make_app, send, send_and_wait, wait_for, wait_ready
from helpers.virtual_terminal import VirtualTerminal, settled
from textual.app import App
from textual.geometry import Region
from textual.widgets import Static

from tui.app.panel.latency_panel import LatencyPanel
from tui.app.render.enter_frame import EnterFrameHold
from tui.demo import DemoThread, start_demo_in_thread
from tui.demo.latency_model import latency_model


class Bare(App[None]):
    def compose(self):  # type: ignore[no-untyped-def]
        yield Static("x")


async def test_release_lets_the_screen_paint_and_is_idempotent() -> None:
    app = Bare()
    async with app.run_test() as pilot:
        hold = EnterFrameHold(app, hold_s=60)
        assert hold.held and app._batch_count == 1  # screen updates are suspended
        hold.release()
        hold.release()
        assert not hold.held and app._batch_count == 0
        await pilot.pause()


async def test_the_deadline_releases_a_hold_nobody_released() -> None:
    app = Bare()
    async with app.run_test() as pilot:
        hold = EnterFrameHold(app, hold_s=0.01)
        await wait_for(pilot, lambda: not hold.held, timeout=5, what="the deadline")
        assert app._batch_count == 0


@pytest.mark.e2e
async def test_after_a_reply_or_an_error_nothing_is_held(demo: DemoThread) -> None:
    for base_url in (demo.base_url, f"{demo.root_url}/fault/500/v1"):
        app = make_app(base_url, max_retries=0)
        async with app.run_test(size=(130, 40)) as pilot:
            await wait_ready(pilot)
            await send_and_wait(pilot, "hello, reply 10 tokens")
            assert app.chat_screen.turn.enter_hold is None and app._batch_count == 0


@pytest.mark.e2e
async def test_quitting_while_enter_is_held_closes_cleanly(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        app.query_one("#prompt").focus()
        await pilot.press(*"bye, reply 400 tokens")
        await pilot.press("enter", "ctrl+q")  # Enter's frame is still held as the app quits
    assert app.return_code in (0, None)
    assert app._exception is None


@pytest.mark.e2e
async def test_enter_frame_leaves_the_panel_to_the_next_frame() -> None:
    # The first token is 400 ms away: Enter's frame goes at the hold's deadline, with the
    # user's message and the cleared prompt, and the panel's waiting figures follow it.
    demo = start_demo_in_thread(latency_model("instant", {"rtt_ms": 400.0}))
    try:
        app = make_app(demo.base_url)
        async with app.run_test(size=(130, 40)) as pilot:
            terminal = VirtualTerminal(app)
            await wait_ready(pilot)
            app.query_one("#prompt").focus()
            await pilot.press(*"hello, reply 5 tokens")
            await wait_for(pilot, lambda: settled(app), what="an idle screen")
            area = app.query_one(LatencyPanel).region
            panel = {(x, y) for x in range(area.x, area.right) for y in range(area.y, area.bottom)}
            before = terminal.frames
            await pilot.press("enter")
            await wait_for(
                pilot,
                lambda: any(cells & panel for cells in terminal.painted_cells[before:]),
                timeout=5,
                what="the panel's waiting figures",
            )
            frames = terminal.painted_cells[before:]
            assert not frames[0] & panel, "Enter's frame painted the panel"
            assert "hello, reply 5 tokens" in terminal.text(), "the message is on screen"
            assert "waiting…" in panel_text(terminal, area)
            await wait_for(pilot, lambda: not app.chat_screen.busy, timeout=15, what="the reply")
    finally:
        demo.stop()


def panel_text(terminal: VirtualTerminal, area: Region) -> str:
    rows = terminal.text().splitlines()[area.y : area.bottom]
    return "\n".join(row[area.x : area.right] for row in rows)


@pytest.mark.e2e
async def test_a_reply_opening_with_markup_releases_enter_frame_before_its_first_word(
    monkeypatch: Any,
) -> None:
    # Every demo reply opens with "##", which shows nothing: its next token is half a second
    # away here, and Enter's frame must not wait for it (nor for the deadline, set far off).
    monkeypatch.setattr(EnterFrameHold.__init__, "__defaults__", (5.0,))
    released_after_writes: list[int] = []
    release = EnterFrameHold.release

    def noted_release(hold: EnterFrameHold) -> None:
        if hold.held and app.chat_screen.turn.current is not None:
            released_after_writes.append(app.chat_screen.turn.writer.writes)
        release(hold)

    monkeypatch.setattr(EnterFrameHold, "release", noted_release)
    demo = start_demo_in_thread(latency_model("instant", {"decode_tokens_per_s": 2.0}))
    try:
        app = make_app(demo.base_url)
        async with app.run_test(size=(130, 40)) as pilot:
            await wait_ready(pilot)
            await send(pilot, "hello, reply 3 tokens")
            await wait_for(pilot, lambda: bool(released_after_writes), timeout=2, what="release")
            assert released_after_writes == [0], "released before the first write"
            assert (
                app.chat_screen.turn.current is not None
                and app.chat_screen.turn.current.state.first_token_at is not None
            )
            await wait_for(pilot, lambda: not app.chat_screen.busy, timeout=15, what="the reply")
    finally:
        demo.stop()
