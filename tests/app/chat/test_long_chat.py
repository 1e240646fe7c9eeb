"""A long chat lays out only its latest blocks; the earlier ones come back on demand, with the
trim preview's marks, and nothing of the conversation itself is lost."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.app_pilot import make_app, send_and_wait, wait_for, wait_ready
from textual.pilot import Pilot

from tui.app.app import FirstTokenApp
from tui.app.chat.chat_log import REVEAL_STEP, VISIBLE_MESSAGES, ChatLog
from tui.app.chat.earlier_messages import EarlierMessages
from tui.demo import DemoThread

pytestmark = pytest.mark.e2e


def conversation(turns: int) -> list[dict[str, str]]:
    messages = []
    for turn in range(turns):
        messages.append({"role": "user", "content": f"question {turn}"})
        messages.append({"role": "assistant", "content": f"answer {turn}\n\n- a\n- b"})
    return messages


def laid_out(chat: ChatLog) -> list[int | None]:
    return [view.message_index for view in chat.shown_views() if view.display]


def row_text(chat: ChatLog) -> str:
    return str(chat.query_one(EarlierMessages).render())


async def long_chat_at_its_end(pilot: Pilot[Any], app: FirstTokenApp, turns: int) -> ChatLog:
    """Load a conversation of `turns` turns, as Ctrl+G does; its chat, scrolled to the end."""
    await app.chat_screen.load_messages(conversation(turns))
    chat = app.query_one(ChatLog)
    await wait_for(pilot, lambda: chat.scroll_y > 0, what="the view at the end")
    return chat


async def test_a_long_conversation_builds_only_its_latest_blocks(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await app.chat_screen.load_messages(conversation(50))
        await pilot.pause()
        chat = app.query_one(ChatLog)
        assert laid_out(chat) == list(range(100 - VISIBLE_MESSAGES, 100))
        assert len(chat.shown_views()) == VISIBLE_MESSAGES  # the rest are not even built
        assert f"{100 - VISIBLE_MESSAGES} earlier messages" in row_text(chat)
        assert len(app.chat.state.messages) == 100  # all of it is still the conversation


async def test_scrolling_to_the_top_shows_more_and_keeps_the_place(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        chat = await long_chat_at_its_end(pilot, app, turns=50)
        oldest = chat.shown_views()[0]
        chat.scroll_home(animate=False)
        shown = VISIBLE_MESSAGES + REVEAL_STEP
        await wait_for(pilot, lambda: len(laid_out(chat)) == min(100, shown), what="more")
        assert laid_out(chat) == list(range(100 - min(100, shown), 100))
        # The block that was the oldest shown is still on screen, at the top (scrolled there
        # once the blocks above it are laid out).
        await wait_for(
            pilot,
            lambda: oldest.region.y == chat.content_region.y,
            what=f"the old top block at the top (at {oldest.region.y})",
        )
        if shown < 100:
            assert f"{100 - shown} earlier messages" in row_text(chat)
        else:
            assert not chat.query(EarlierMessages)


async def test_clicking_the_row_shows_more(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    # A terminal tall enough for every block laid out: the row is in view at the top,
    # with no scrolling (which would show more by itself).
    async with app.run_test(size=(120, VISIBLE_MESSAGES * 6)) as pilot:
        await wait_ready(pilot)
        await app.chat_screen.load_messages(conversation(100))
        chat = app.query_one(ChatLog)
        await pilot.pause()
        assert chat.scroll_y == 0
        await pilot.click(EarlierMessages)
        await wait_for(
            pilot,
            lambda: len(laid_out(chat)) == VISIBLE_MESSAGES + REVEAL_STEP,
            what="more after the click",
        )


async def test_old_blocks_fold_after_a_reply_while_the_view_follows(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await app.chat_screen.load_messages(
            conversation(VISIBLE_MESSAGES // 2)
        )  # exactly the limit
        chat = app.query_one(ChatLog)
        assert not chat.query(EarlierMessages)
        await send_and_wait(pilot, "one more, reply 5 tokens")
        await wait_for(pilot, lambda: chat.hidden_messages == 2, what="the fold")
        assert laid_out(chat) == list(range(2, VISIBLE_MESSAGES + 2))
        assert "2 earlier messages" in row_text(chat)
        # Scrolled up to read: the next reply folds nothing away from under the reader.
        chat.release_anchor()  # what the mouse wheel or a scroll key does
        chat.scroll_to(y=2, animate=False)
        await pilot.pause()
        await send_and_wait(pilot, "and another, reply 5 tokens")
        await pilot.pause()
        assert chat.hidden_messages == 2


async def test_blocks_built_later_carry_the_trim_marks(demo: DemoThread) -> None:
    app = make_app(demo.base_url, token_budget=1_000)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        long = [{"role": "user", "content": "word " * 300}, {"role": "assistant", "content": "ok"}]
        await app.chat_screen.load_messages(long * 40)
        chat = app.query_one(ChatLog)
        await wait_for(
            pilot,
            lambda: app.chat_screen.preview is not None and app.chat_screen.preview.dropped_indices,
        )
        await wait_for(pilot, lambda: chat.shown_views()[-1].has_class("-dropped") is False)
        await chat.reveal_earlier()
        await pilot.pause()
        dropped = app.chat_screen.preview.dropped_indices
        built_later = chat.shown_views()[:REVEAL_STEP]
        assert built_later and all(view.message_index in dropped for view in built_later)
        assert all(view.has_class("-dropped") for view in built_later)


async def test_page_keys_in_the_prompt_page_the_chat_and_reach_earlier_messages(
    demo: DemoThread,
) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        chat = await long_chat_at_its_end(pilot, app, turns=50)
        assert app.focused is app.query_one("#prompt")
        end = chat.scroll_y
        await pilot.press("pageup")
        await wait_for(pilot, lambda: chat.scroll_y < end, what="a page up")
        assert app.focused is app.query_one("#prompt")
        for _ in range(200):  # to the top: the earlier messages come in
            if len(laid_out(chat)) > VISIBLE_MESSAGES:
                break
            await pilot.press("pageup")
        assert len(laid_out(chat)) > VISIBLE_MESSAGES
        for _ in range(400):  # and back down to the end: following again
            await pilot.press("pagedown")
            if chat.is_vertical_scroll_end:
                break
        await pilot.pause()
        assert chat.following()


async def test_opening_a_long_chat_from_a_long_chat_opens_at_its_end(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        chat = await long_chat_at_its_end(pilot, app, turns=50)
        await app.chat_screen.load_messages(conversation(60))  # as Ctrl+G does
        # (Its blocks are mounted over a few frames: the view follows them to the end.)
        await wait_for(
            pilot,
            lambda: chat.scroll_y > 0 and chat.is_vertical_scroll_end,
            what=f"the new chat at its end (at {chat.scroll_y} of {chat.max_scroll_y})",
        )
        # Emptying the old chat scrolled to the top: that must not count as the user asking
        # for earlier messages of the new one.
        assert laid_out(chat) == list(range(120 - VISIBLE_MESSAGES, 120))


async def test_a_reveal_while_another_chat_opens_shows_none_of_the_old_chat(
    demo: DemoThread,
) -> None:
    """Emptying the old chat scrolls it to the top, which asks for earlier messages; that
    request can run while the old blocks are still being removed. It must
    neither fail nor bring the old chat's messages into the new one."""
    app = make_app(demo.base_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        chat = await long_chat_at_its_end(pilot, app, turns=50)
        opening = asyncio.ensure_future(app.chat_screen.load_messages(conversation(60)))
        await asyncio.sleep(0)  # the old blocks are being removed
        assert not opening.done()
        await chat.reveal_earlier()
        await opening
        await wait_for(pilot, lambda: chat.is_vertical_scroll_end, what="the new chat's end")
        assert laid_out(chat) == list(range(120 - VISIBLE_MESSAGES, 120))
        assert [m["content"] for m in app.chat.state.messages] == [
            m["content"] for m in conversation(60)
        ]
