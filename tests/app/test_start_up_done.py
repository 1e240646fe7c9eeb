"""The end of start-up: objects frozen out of garbage collection without a collection pause,
also when the first Enter comes before the connection is warm (a fast typist, a script); the
next turn's blocks mounted only once the reply's modules are imported off the UI loop."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Coroutine, Iterator
from typing import Any

import pytest
from helpers.app_pilot import make_app, replies, wait_for

import tui.app.chat.chat_log
import tui.app.chat.message_view
from tui.app.chat.chat_log import ChatLog
from tui.demo import DemoThread

pytestmark = pytest.mark.e2e


@pytest.fixture
def collections(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Every gc.collect() call made while the test runs (generation asked for)."""
    calls: list[int] = []
    collect = gc.collect

    def counted(generation: int = 2) -> int:
        calls.append(generation)
        return collect(generation)

    monkeypatch.setattr(gc, "collect", counted)
    try:
        yield calls
    finally:
        gc.unfreeze()  # the next tests start from a collector like any other process's


async def test_enter_before_the_connection_still_freezes_start_up(
    demo: DemoThread, collections: list[int]
) -> None:
    gc.unfreeze()
    app = make_app(demo.base_url)
    call = app.chat.engine.network.call

    async def call_after_enter(coro: Coroutine[Any, Any, Any]) -> Any:
        # The connection (the model list) comes back only once the first reply is under way.
        app.chat.engine.network.call = call  # type: ignore[method-assign]  # only this first call waits
        while not app.chat_screen.busy:
            await asyncio.sleep(0.01)
        return await call(coro)

    app.chat.engine.network.call = call_after_enter  # type: ignore[method-assign]
    async with app.run_test(size=(130, 40)) as pilot:
        await pilot.pause()
        app.chat_screen.turn.submit("hello, reply 30 tokens")
        await wait_for(pilot, lambda: app.chat.engine.connected, what="the connection")
        # Frozen while the reply is under way; no full collection stops the loop for it.
        assert gc.get_freeze_count() > 0
        assert collections == []
        await wait_for(pilot, lambda: not app.chat_screen.busy, what="the reply")
        assert app.chat_screen.last_record is not None and app.chat_screen.last_record.output_tokens
        assert replies(app)[-1].source.strip()


async def test_start_up_is_frozen_without_a_collection(
    demo: DemoThread, collections: list[int]
) -> None:
    gc.unfreeze()
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: app.chat.engine.connected, what="the connection")
        assert gc.get_freeze_count() > 0
        assert collections == []


async def test_next_turn_blocks_wait_for_the_reply_modules(
    demo: DemoThread, monkeypatch: pytest.MonkeyPatch, collections: list[int]
) -> None:
    # The blocks import Textual's Markdown: mounted while the warm-up thread still imports
    # it, the UI loop would wait on that thread's import lock.
    warm_up = tui.app.chat.message_view.warm_up_markdown
    imports_may_end = threading.Event()

    def slow_warm_up() -> None:
        imports_may_end.wait(30)  # a cold disk: the imports end after the connection
        warm_up()

    monkeypatch.setattr(tui.app.chat.message_view, "warm_up_markdown", slow_warm_up)
    gc.unfreeze()
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        chat = app.query_one(ChatLog)
        await wait_for(pilot, lambda: app.chat.engine.connected, what="the connection")
        await pilot.pause(0.1)
        assert chat._spare_reply is None and gc.get_freeze_count() == 0
        imports_may_end.set()
        await wait_for(pilot, lambda: chat._spare_reply is not None, what="the next turn")
        assert gc.get_freeze_count() > 0


async def test_closing_while_the_block_styles_warm_up_is_not_an_error(
    demo: DemoThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The warm-up mounts a hidden reply with every block kind once start-up is done; a user
    # who quits just then must see the app close cleanly, not a worker's MountError.
    warm_up = tui.app.chat.chat_log.warm_up_block_styles
    started: list[bool] = []

    async def quit_as_it_starts(parent: Any, *probe: Any) -> None:
        started.append(True)
        parent.app.exit()
        await warm_up(parent, *probe)

    monkeypatch.setattr(tui.app.chat.chat_log, "warm_up_block_styles", quit_as_it_starts)
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: bool(started), what="the style warm-up")
        await pilot.pause(0.2)
    assert app.return_code in (0, None)
