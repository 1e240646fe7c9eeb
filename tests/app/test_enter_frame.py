"""Enter's frame is held for the first words, never longer than the deadline, never forever."""

from __future__ import annotations

from app_helpers import make_app, send_and_wait, wait_for, wait_ready
from textual.app import App
from textual.widgets import Static

from tui.app.enter_frame import EnterFrameHold
from tui.engine.demo_server import DemoThread


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


async def test_after_a_reply_or_an_error_nothing_is_held(demo: DemoThread) -> None:
    for base_url in (demo.base_url, f"{demo.root_url}/fault/500/v1"):
        app = make_app(base_url, max_retries=0)
        async with app.run_test(size=(130, 40)) as pilot:
            await wait_ready(pilot)
            await send_and_wait(pilot, "hello, reply 10 tokens")
            assert app._enter_hold is None and app._batch_count == 0


async def test_quitting_while_enter_is_held_closes_cleanly(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        app.query_one("#prompt").focus()
        await pilot.press(*"bye, reply 400 tokens")
        await pilot.press("enter", "ctrl+q")  # Enter's frame is still held as the app quits
    assert app.return_code in (0, None)
    assert app._exception is None
