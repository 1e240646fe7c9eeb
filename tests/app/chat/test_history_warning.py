"""A history that cannot be written is said in the chat, and stays said: a corrupt file or a
folder that cannot be written at start (the app opens without a store, as `firsttoken` does),
or saves that start failing while the app runs. Chatting goes on either way."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.app_pilot import firsttoken_app, send, send_and_wait, wait_for, wait_ready

from tui.app.app import FirstTokenApp
from tui.app.chat.history_bar import HEADLINE, HistoryWarning
from tui.config import ConfigFlags, load_config
from tui.demo import DemoThread
from tui.engine.store.database import Store, StoreError
from tui.locations import history_db_path
from tui.wiring import Endpoint

pytestmark = pytest.mark.e2e


def _app(base_url: str, store: Store | None, problem: str | None = None) -> FirstTokenApp:
    """The app as `firsttoken` builds it: the store, or why there is none."""
    config = load_config(ConfigFlags(base_url=base_url), env={})
    endpoint = Endpoint(base_url=base_url, api_key="demo", simulated=True)
    return firsttoken_app(config, endpoint, store=store, history_problem=problem)


def _opened() -> tuple[Store | None, str | None]:
    """What `firsttoken` gets when it opens the history."""
    try:
        return Store(), None
    except StoreError as unusable:
        return None, str(unusable)


def _warning_text(app: FirstTokenApp) -> str:
    bars = app.query(HistoryWarning)
    return str(bars.first().render()) if bars else ""


def _corrupt() -> None:
    path = history_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database\n" * 100)


def _folder_in_the_way() -> None:
    # A file where the data folder should be: nothing can be created in it (root included).
    folder = history_db_path().parent
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("not a folder")


@pytest.mark.parametrize(
    ("break_it", "reason"),
    [(_corrupt, "not a database"), (_folder_in_the_way, "writable")],
    ids=["corrupt-file", "unwritable-folder"],
)
async def test_a_history_that_cannot_be_opened_is_said_in_the_chat_and_chatting_goes_on(
    demo: DemoThread, break_it, reason: str
) -> None:
    break_it()
    store, problem = _opened()
    assert store is None and problem is not None
    app = _app(demo.base_url, store, problem)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        text = _warning_text(app)
        assert text.startswith(HEADLINE) and reason in text and str(history_db_path()) in text
        record = await send_and_wait(pilot, "still there? reply 10 tokens")
        assert record.status.value == "ok"
        await pilot.pause(0.5)
        assert _warning_text(app) == text  # persistent, not a toast
        assert app.query_one(HistoryWarning).region.height >= 1  # on screen, above the chat


async def test_saves_that_start_failing_mid_session_are_said_in_the_chat(
    demo: DemoThread, tmp_path: Path
) -> None:
    store = Store(tmp_path / "history.sqlite3")
    app = _app(demo.base_url, store)
    try:
        async with app.run_test(size=(130, 40)) as pilot:
            await wait_ready(pilot)
            await send_and_wait(pilot, "first, reply 5 tokens")
            assert not app.query(HistoryWarning)
            store._db.execute("PRAGMA query_only=ON")  # every write now fails (read-only)
            record = await send_and_wait(pilot, "second, reply 5 tokens")
            assert record.status.value == "ok"  # the reply came all the same
            await wait_for(pilot, lambda: bool(app.query(HistoryWarning)), what="the warning")
            assert "readonly" in _warning_text(app) or "read-only" in _warning_text(app)
    finally:
        store.close()


async def test_quitting_mid_reply_when_the_history_cannot_be_saved_ends_cleanly(
    slow_demo: DemoThread, tmp_path: Path
) -> None:
    # Ctrl+Q files the reply under way as the app closes; that save fails (a full disk).
    store = Store(tmp_path / "history.sqlite3")
    app = _app(slow_demo.base_url, store)
    try:
        async with app.run_test(size=(130, 40)) as pilot:
            await wait_ready(pilot)
            await send(pilot, "hello, reply 400 tokens")
            turn = app.chat_screen.turn
            assert turn is not None
            await wait_for(
                pilot, lambda: turn.current is not None and turn.current.state.tokens >= 3
            )
            assert not app.query(HistoryWarning)
            store._db.execute("PRAGMA query_only=ON")  # every write now fails
            await pilot.press("ctrl+q")
        assert app.return_code == 0
        # The chat is gone: what was not saved is said once the app has ended.
        assert app.unsaved_at_exit is not None and "readonly" in app.unsaved_at_exit
    finally:
        store.close()
