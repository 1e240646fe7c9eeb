"""Server text never reaches the screen with its control characters live: a reply, an error
body and model ids full of escape sequences (OSC 52, OSC 0/2, CSI 2J, cursor moves, DCS, 8-bit
C1) from the fault server, as they stream, when the chat is reopened, in the pickers, in
notifications and in what F7 copies. The history keeps the exact text.

"What reaches the screen" is Textual's own rendering of the whole screen
(`export_screenshot()` renders every visible segment, controls included, as it would write
them to the terminal)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.app_pilot import make_app, send_and_wait, wait_for, wait_ready
from helpers.fault_server import HOSTILE, FaultServer

from tui.app.chat.chat_log import ChatLog
from tui.app.chat.message_view import ErrorMessage
from tui.app.screens.chat_picker import ChatPicker
from tui.app.screens.model_picker import ModelPicker
from tui.engine.store.database import Store
from tui.engine.text.inert import inert

pytestmark = pytest.mark.e2e


def live_controls(text: str) -> list[str]:
    """The control characters a terminal would act on (newline and tab are layout)."""
    return sorted(
        {
            f"U+{ord(c):04X}"
            for c in text
            if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F
        }
    )


def screen_controls(app: Any) -> list[str]:
    return live_controls(app.export_screenshot())


@pytest.fixture(scope="module")
def faults() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "history.sqlite3") as opened:
        yield opened


async def test_a_hostile_reply_is_inert_on_screen_and_exact_in_the_history(
    faults: FaultServer, store: Store, request: pytest.FixtureRequest
) -> None:
    base_url = faults.url("esc-reply", request.node.name)
    app = make_app(base_url, store=store, max_retries=0)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        record = await send_and_wait(pilot, "hello")
        assert record.status.value == "ok"
        reply = app.query_one(ChatLog).replies()[-1]
        assert reply.source == inert(HOSTILE)
        assert "␛]52;c;aGFja2Vk␇" in reply.source and "\\x9b2J" in reply.source
        assert screen_controls(app) == []
        assert app.chat.state.messages[-1]["content"] == HOSTILE  # sent next time as it came

        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("f7")
        assert copied == [inert(HOSTILE)]  # what the user saw, nothing hidden
    (stored,) = store.records()
    assert stored["reply_text"] == HOSTILE
    chat_id = store.chats()[0]["id"]

    reopened = make_app(base_url, store=store, resume_chat=chat_id)
    async with reopened.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: reopened.chat.state.chat_id == chat_id, what="--resume")
        await pilot.pause(0.1)
        assert reopened.query_one(ChatLog).replies()[-1].source == inert(HOSTILE)
        assert screen_controls(reopened) == []


async def test_a_hostile_error_body_is_inert_in_its_error_block(
    faults: FaultServer, store: Store, request: pytest.FixtureRequest
) -> None:
    app = make_app(faults.url("esc-error", request.node.name), store=store, max_retries=0)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        record = await send_and_wait(pilot, "hello")
        assert record.status.value == "error"
        (error,) = app.query(ErrorMessage)
        hint = str(error.query_one(".body").render())
        assert "boom" in hint and "␛" in hint
        assert screen_controls(app) == []


async def test_hostile_model_ids_are_inert_in_the_picker_and_the_header_and_sent_exactly(
    faults: FaultServer, store: Store, request: pytest.FixtureRequest
) -> None:
    app = make_app(faults.url("esc-model", request.node.name), store=store, max_retries=0)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: len(app.chat.engine.models) > 1, what="the listed models")
        evil = f"evil{HOSTILE}"
        assert evil in app.chat.engine.models  # the server's id, exactly
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPicker), what="the picker")
        await pilot.pause(0.1)
        assert screen_controls(app) == []  # listed inert
        await pilot.press(*"evil", "enter")
        await wait_for(pilot, lambda: app.chat.state.model == evil, what="the choice")
        await pilot.pause(0.1)
        assert screen_controls(app) == []  # the header, the panel and the toast name it
        record = await send_and_wait(pilot, "hello")  # the server's chunks name it too
        assert screen_controls(app) == []
        assert record.status.value == "ok"
        # The request names the model the server listed, not the stand-in the picker showed.
        sent = [
            json.loads(body)
            for (_, target, _), body in zip(faults.requests, faults.bodies, strict=True)
            if target.endswith("/chat/completions")
        ]
        assert sent[-1]["model"] == evil


async def test_chat_titles_and_notifications_are_inert(
    faults: FaultServer, store: Store, request: pytest.FixtureRequest
) -> None:
    chat_id = store.new_chat(f"title {HOSTILE}", f"model {HOSTILE}")
    store.add_message(chat_id, {"role": "user", "content": f"question {HOSTILE}"})
    store.add_message(chat_id, {"role": "assistant", "content": HOSTILE, "reasoning": HOSTILE})
    app = make_app(faults.url("healthy", request.node.name), store=store)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        app.notify(f"server said {HOSTILE}", title=f"t {HOSTILE}")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatPicker), what="the chat picker")
        await pilot.pause(0.1)
        assert screen_controls(app) == []
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.chat.state.chat_id == chat_id, what="the chosen chat")
        await pilot.pause(0.1)
        assert screen_controls(app) == []
        assert app.chat.state.messages[1]["content"] == HOSTILE  # the session keeps it exact
