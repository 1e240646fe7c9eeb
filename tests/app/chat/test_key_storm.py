"""Keys in bursts, as a fast typist or a held key sends them: words, Enter, Esc, every
binding (pickers, the system prompt, new chat, the sample, retry) with and without pauses,
while replies stream. Whatever the order, the app must not fail, and once it is idle the chat
on screen, the chat session and the stored chat must agree. (Bursts like these can make a
picker answer twice, or open two chats at once and show both.)"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.app_pilot import make_app, send_and_wait, wait_for, wait_ready
from textual import events

from tui.app.app import FirstTokenApp
from tui.app.chat.chat_log import ChatLog
from tui.app.chat.prompt_input import PromptInput
from tui.app.screens.chat_screen import ChatScreen
from tui.demo import DemoThread, start_demo_in_thread
from tui.demo.latency_model import latency_model
from tui.engine.store.database import Store

pytestmark = pytest.mark.e2e

BINDING_KEYS = [
    "enter", "escape", "ctrl+t", "f3", "f5", "ctrl+n", "ctrl+g", "f2", "f6", "f7", "f8", "f9",
    "f10", "ctrl+up", "ctrl+down", "f1", "up", "down", "pageup", "pagedown", "ctrl+j",
    "ctrl+s", "tab", "backspace",
]  # fmt: skip
LETTERS = [*"hello reply 5 tokens"]
PAUSES = [0.0, 0.01, 0.05, 0.2]
CHARACTERS = {"space": " ", "enter": "\r", "tab": "\t", "escape": "\x1b", "backspace": "\x7f"}


@pytest.fixture
def streaming_demo() -> Iterator[DemoThread]:
    """200 tokens/s: a reply is under way for most of a burst."""
    thread = start_demo_in_thread(latency_model("instant", {"decode_tokens_per_s": 200.0}))
    try:
        yield thread
    finally:
        thread.stop()


def _burst(chooser: random.Random) -> list[str]:
    if chooser.random() < 0.45:
        letters = [chooser.choice(LETTERS) for _ in range(chooser.randint(1, 6))]
        return ["space" if letter == " " else letter for letter in letters]
    return [chooser.choice(BINDING_KEYS) for _ in range(chooser.randint(1, 4))]


def _send_at_once(app: FirstTokenApp, keys: list[str]) -> None:
    """Queue the keys as one terminal read does, before the app has handled any of them
    (Pilot.press waits for the app to go idle after each key: no burst)."""
    for key in keys:
        character = CHARACTERS.get(key, key if len(key) == 1 else None)
        app.post_message(events.Key(key, character))


@pytest.mark.parametrize("seed", [1, 10])  # fixed seeds: a failure replays key for key
async def test_key_bursts_leave_screen_session_and_store_in_step(
    streaming_demo: DemoThread, tmp_path: Path, seed: int
) -> None:
    chooser = random.Random(seed)  # the same keys every run; their timing is the machine's
    with Store(tmp_path / "history.sqlite3") as store:
        app = make_app(streaming_demo.base_url, store=store)
        async with app.run_test(size=(110, 32)) as pilot:
            await wait_ready(pilot)
            for _ in range(150):
                _send_at_once(app, _burst(chooser))
                await pilot.pause(chooser.choice(PAUSES))
            for _ in range(6):  # close what is open (modals can stack), cancel what streams
                await pilot.press("escape")
                if isinstance(app.screen, ChatScreen):
                    break
            assert isinstance(app.screen, ChatScreen)
            await wait_for(pilot, lambda: not app.chat_screen.busy, timeout=30, what="the app idle")
            app.query_one(PromptInput).clear_prompt()  # what the burst left half typed
            # The app still works, and what it shows, holds and stored agree.
            await send_and_wait(pilot, "after the burst, reply 5 tokens")
            messages = app.chat.state.messages
            assert messages[-2]["content"] == "after the burst, reply 5 tokens"
            chat = app.query_one(ChatLog)
            shown = [view.message_index for view in chat.message_views()]
            # The latest messages, in order, each once (earlier ones may be left unbuilt).
            assert shown == list(range(len(messages) - len(shown), len(messages)))
            assert app.chat.state.chat_id is not None
            assert store.messages(app.chat.state.chat_id) == messages
