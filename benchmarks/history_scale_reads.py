"""What history_scale times on its generated history: each read a user waits for, as the app
and the commands make it, with its target.

Store-level reads go through the same calls the app's picker, its `--resume` and the `stats`
command make; the app-level ones drive the real app headless (`run_test`) against a demo
endpoint on this machine: the Ctrl+G key until the picker's first page is laid out on screen,
`--resume` of the 2,000-message chat until its last message is on screen, and the app's start
until it is ready.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

Read = tuple[str, str, Callable[[], object]]


def store_reads(path: Path, big: int) -> Iterator[Read]:
    from tui.config import Config
    from tui.engine.metrics.statistics import group_stats
    from tui.engine.store.database import APP_CHAT, RACE_CHAT, Store
    from tui.session.chat_state import ChatState
    from tui.session.history import ChatHistory

    store = Store(path)
    history = ChatHistory(store, ChatState.from_config(Config()), warn=print)

    def picker_page() -> object:
        return history.chats((APP_CHAT, RACE_CHAT), 0, 60), history.counts()

    yield "picker's first page (store)", "≤ 200 ms", picker_page
    yield "2,000-message chat read (store)", "≤ 500 ms", lambda: history.chat(big)
    yield "search over every message", "≤ 200 ms", lambda: history.search("bandwidth kernel")
    yield "stats over every record", "≤ 1 s", lambda: group_stats(store.latency_rows())


async def _until(check: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.005)


def _app(path: Path, base_url: str, resume: int | None = None) -> Any:
    from tui.app.app import FirstTokenApp
    from tui.app.preferences import Preferences
    from tui.config import ConfigFlags, load_config
    from tui.engine.store.database import Store
    from tui.wiring import Endpoint

    config = load_config(ConfigFlags(base_url=base_url), env={})
    endpoint = Endpoint(base_url=base_url, api_key="demo", simulated=True)
    return FirstTokenApp(
        config,
        lambda: nullcontext(endpoint),
        preferences=Preferences.in_memory(),
        prompt_history=None,
        store=Store(path),
        resume_chat=resume,
    )


async def _ready_ms(path: Path, base_url: str) -> float:
    started = time.perf_counter()
    app = _app(path, base_url)
    async with app.run_test(size=(120, 40)):
        await _until(lambda: app.chat_screen.preview is not None)
        return (time.perf_counter() - started) * 1000


async def _picker_ms(path: Path, base_url: str) -> float:
    """From the Ctrl+G key event reaching the app to the picker's list laid out on screen
    (the compositor has placed it: the paint follows in the same refresh). The key goes in
    as the terminal's would, not through Pilot's press, whose own waits for the app to be
    idle would be counted too."""
    from textual import events
    from textual.widgets import OptionList

    from tui.app.screens.chat_picker import ChatPicker

    app = _app(path, base_url)
    async with app.run_test(size=(120, 40)):
        await _until(lambda: app.chat_screen.preview is not None)
        await asyncio.sleep(0.5)  # the start-up's deferred work done, as a user's first key

        def listed() -> bool:
            screen = app.screen
            if not isinstance(screen, ChatPicker):
                return False
            options = screen.query_one(OptionList)
            return options.option_count > 0 and options.region.height > 0

        started = time.perf_counter()
        app.post_message(events.Key("ctrl+g", None))
        await _until(listed)
        return (time.perf_counter() - started) * 1000


async def _resume_ms(path: Path, base_url: str, big: int, last_words: str) -> float:
    from tui.app.chat.message_view import MessageView

    started = time.perf_counter()
    app = _app(path, base_url, resume=big)
    async with app.run_test(size=(120, 40)):

        def shown() -> bool:
            views = app.screen.query(MessageView)
            return bool(views) and last_words in views.last().source

        await _until(shown)
        return (time.perf_counter() - started) * 1000


def app_reads(path: Path, big: int, base_url: str, last_words: str) -> Iterator[Read]:
    def run(make: Callable[[], Any]) -> Callable[[], object]:
        return lambda: asyncio.run(make())

    yield "app ready", "≤ 400 ms", run(lambda: _ready_ms(path, base_url))
    picker = run(lambda: _picker_ms(path, base_url))
    yield "Ctrl+G until the picker's list is on screen", "≤ 200 ms", picker
    yield (
        "--resume of the 2,000-message chat to its last message",
        "≤ 500 ms",
        run(lambda: _resume_ms(path, base_url, big, last_words)),
    )


def measured(work: Callable[[], object]) -> float:
    """A read's wall time in ms: what it returns when it measures itself (an app-level read
    times from its own start point), else the time the call took."""
    started = time.perf_counter()
    result = work()
    took = (time.perf_counter() - started) * 1000
    return float(result) if isinstance(result, float) else took
