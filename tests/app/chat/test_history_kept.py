"""What the app stores is the chat as it stands, and no request's record is ever dropped:
not when the app quits mid-reply, not when a new chat is started mid-reply, not when a reply
is retried or the system prompt changes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.app_pilot import (
    make_app,
    send,
    send_and_wait,
    send_sample_and_wait,
    wait_for,
    wait_ready,
)

from tui.app.chat.chat_log import ChatLog
from tui.app.chat.message_view import ErrorMessage
from tui.app.panel.ttft_history import format_ms
from tui.app.screens.chat_picker import ChatPicker
from tui.demo import DemoThread
from tui.engine.metrics.record import RequestStatus
from tui.engine.store.database import Store

pytestmark = pytest.mark.e2e


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A history file of the test's own, closed at the end."""
    with Store(tmp_path / "history.sqlite3") as opened:
        yield opened


async def _streaming(pilot, app, text: str) -> None:
    await send(pilot, text)
    await wait_for(
        pilot,
        lambda: (
            app.chat_screen.turn.current is not None
            and app.chat_screen.turn.current.state.tokens >= 5
        ),
        timeout=30,
        what="the first tokens",
    )


async def test_quitting_mid_reply_keeps_its_record_and_partial_text(
    slow_demo: DemoThread, store: Store
) -> None:
    app = make_app(slow_demo.base_url, store=store, chunk_timeout_ms=30_000)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await _streaming(pilot, app, "reply 3000 tokens")
        await pilot.press("ctrl+q")
    (record,) = store.records()
    assert record["status"] == RequestStatus.CANCELLED.value
    assert record["reply_text"].strip()
    assert len(record["reply_text"].split()) < 3000
    chat_id = store.chats()[0]["id"]
    assert record["chat_id"] == chat_id
    stored = store.messages(chat_id)
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[1]["content"] == record["reply_text"]


async def test_a_new_chat_mid_reply_files_the_reply_under_the_old_chat(
    slow_demo: DemoThread, store: Store
) -> None:
    app = make_app(slow_demo.base_url, store=store, chunk_timeout_ms=30_000)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await _streaming(pilot, app, "reply 3000 tokens")
        old_chat = app.chat.state.chat_id
        await pilot.press("ctrl+n")
        await wait_for(
            pilot, lambda: not app.chat_screen.busy, timeout=30, what="the cancelled end"
        )
        assert app.chat.state.messages == []
        # The old reply's last write lands on a removed widget: it must not show an
        # "unexpected NoScreen" error in the new chat, nor lose the record.
        assert not app.query(ErrorMessage)
        (record,) = store.records()
        assert record["status"] == RequestStatus.CANCELLED.value
        assert record["chat_id"] == old_chat
        assert [m["role"] for m in store.messages(old_chat)] == ["user", "assistant"]


async def test_retry_and_system_prompt_leave_the_stored_chat_as_shown(
    demo: DemoThread, store: Store
) -> None:
    app = make_app(demo.base_url, store=store)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        first = await send_and_wait(pilot, "hello, reply 10 tokens")
        await pilot.press("f5")
        await wait_for(
            pilot,
            lambda: app.chat_screen.last_record is not first and not app.chat_screen.busy,
            what="the retried reply",
        )
        chat_id = app.chat.state.chat_id
        assert chat_id is not None
        assert store.messages(chat_id) == app.chat.state.messages
        assert [m["role"] for m in app.chat.state.messages] == ["user", "assistant"]
        # Both replies' records are kept, the replaced one included.
        assert len(store.records(chat_id=chat_id)) == 2

        await pilot.press("f9")
        await pilot.press(*"be brief")
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: app.chat.state.system_prompt == "be brief", what="the system prompt"
        )
        await pilot.pause(0.05)
        assert store.messages(chat_id) == app.chat.state.messages
        assert store.messages(chat_id)[0] == {"role": "system", "content": "be brief"}


async def test_a_loaded_conversation_sent_as_it_stands_becomes_a_chat(
    demo: DemoThread, store: Store
) -> None:
    app = make_app(demo.base_url, store=store)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send_sample_and_wait(pilot, what="the reply")
        chat_id = app.chat.state.chat_id
        assert chat_id is not None
        assert store.messages(chat_id) == app.chat.state.messages
        assert store.records()[0]["chat_id"] == chat_id
        assert store.chats()[0]["title"].startswith("Given all that")


async def _saved_chat(store: Store, title: str, reply: str) -> int:
    chat_id = store.new_chat(title, "old-model")
    store.add_message(chat_id, {"role": "user", "content": title})
    store.add_message(chat_id, {"role": "assistant", "content": reply})
    return chat_id


async def test_ctrl_g_opens_a_saved_chat_and_carries_on_in_it(
    demo: DemoThread, store: Store
) -> None:
    app = make_app(demo.base_url, store=store)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        first = await send_and_wait(pilot, "the first chat, on walruses, reply 10 tokens")
        await pilot.press("ctrl+n")
        await send_and_wait(pilot, "the second chat, reply 10 tokens")
        second_chat = app.chat.state.chat_id
        await pilot.press("ctrl+g")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ChatPicker) and app.screen.focused is not None,
            what="the chat picker, its filter focused",
        )
        # Typed and Enter at once: the search over every message is answered first.
        await pilot.press(*"walrus", "enter")
        await wait_for(
            pilot, lambda: app.chat.state.chat_id not in (None, second_chat), what="the first chat"
        )
        first_chat = app.chat.state.chat_id
        assert (
            app.chat.state.messages[0]["content"] == "the first chat, on walruses, reply 10 tokens"
        )
        # Its reply shows its model and figures again, as when it arrived.
        reply = app.query_one(ChatLog).replies()[-1]
        assert reply.border_title == f"assistant · {first.model}"
        assert format_ms(first.ttft_ms) in str(reply.border_subtitle)
        assert (
            app.chat_screen.last_record is not None and app.chat_screen.last_record.id == first.id
        )
        shown = app.query_one("#panel").query_one("TtftHistory")
        assert len(shown.samples) == 1  # the TTFT history is the opened chat's
        await send_and_wait(pilot, "and one more, reply 5 tokens")
        assert store.messages(first_chat) == app.chat.state.messages
        assert len(app.chat.state.messages) == 4
        # The chat carried on is the last used: it comes first (and `--resume` opens it).
        assert [c["message_count"] for c in store.chats()] == [4, 2]


async def test_resume_opens_the_chat_after_the_first_frame(demo: DemoThread, store: Store) -> None:
    chat_id = await _saved_chat(store, "what is TTFT?", "time to first token")
    app = make_app(demo.base_url, store=store, resume_chat=chat_id)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: app.chat.state.chat_id == chat_id, what="the resumed chat")
        assert app.chat.state.messages[-1]["content"] == "time to first token"
        await send_and_wait(pilot, "thanks, reply 5 tokens")
        assert len(store.messages(chat_id)) == 4


async def test_chats_opened_in_quick_succession_show_only_the_last(
    demo: DemoThread, store: Store
) -> None:
    """Each opening awaits the old blocks' removal; the first must not add its blocks after
    the second emptied the pane, nor claim the chat (what is sent next) for itself."""
    first = await _saved_chat(store, "the first saved chat", "its answer")
    second = await _saved_chat(store, "the second saved chat", "another answer")
    app = make_app(demo.base_url, store=store)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await asyncio.gather(app.chat_screen.open_chat(first), app.chat_screen.open_chat(second))
        await pilot.pause()
        assert app.chat.state.chat_id == second
        assert app.chat.state.messages == store.messages(second)
        chat = app.query_one(ChatLog)
        assert [view.message_index for view in chat.message_views()] == [0, 1]
        assert [reply.source for reply in chat.replies()] == ["another answer"]
        await send_and_wait(pilot, "and so, reply 5 tokens")
        assert len(store.messages(second)) == 4 and len(store.messages(first)) == 2


async def test_enter_while_a_chat_goes_on_screen_sends_after_it(
    demo: DemoThread, store: Store
) -> None:
    """Ctrl+G, Enter, a message and Enter typed ahead: the message is sent once the chat is
    on screen and lands after its blocks (not shown before them and then again)."""
    chat_id = await _saved_chat(store, "a saved chat", "its answer")
    app = make_app(demo.base_url, store=store)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        before = app.chat_screen.last_record
        opening = asyncio.ensure_future(app.chat_screen.open_chat(chat_id))
        await asyncio.sleep(0)
        chat = app.query_one(ChatLog)
        assert not opening.done()  # the old blocks are being removed
        app.chat_screen.turn.submit("and then? reply 5 tokens")
        await opening
        await wait_for(
            pilot,
            lambda: app.chat_screen.last_record is not before and not app.chat_screen.busy,
            what="the reply",
        )
        assert [view.message_index for view in chat.message_views()] == [0, 1, 2, 3]
        assert chat.replies()[0].source == "its answer"
        assert store.messages(chat_id) == app.chat.state.messages
        assert len(app.chat.state.messages) == 4
