"""The next turn's blocks are mounted hidden while idle; Enter shows them (no mount on the
way to the first token) and the chat's order stays the conversation's order."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.app_pilot import (
    make_app,
    record_layouts,
    replies,
    send_and_wait,
    shown_views,
    wait_for,
    wait_ready,
)
from helpers.virtual_terminal import settled
from textual.pilot import Pilot

from tui.app.app import FirstTokenApp
from tui.app.chat.chat_log import ChatLog
from tui.app.chat.message_view import AssistantMessage, MessageView
from tui.app.panel.latency_panel import LatencyPanel
from tui.demo import DemoThread

pytestmark = pytest.mark.e2e


def is_spare(view: object) -> bool:
    """One of the hidden blocks kept for the next turn."""
    return isinstance(view, MessageView) and view.spare


def spares(app: FirstTokenApp) -> list[Any]:
    return [child for child in app.query_one(ChatLog).children if is_spare(child)]


async def spares_ready(pilot: Pilot[Any]) -> list[Any]:
    app = pilot.app
    assert isinstance(app, FirstTokenApp)
    await wait_for(
        pilot, lambda: len(spares(app)) == 2 and not app.chat_screen.busy, what="spare blocks"
    )
    return spares(app)


def roles(app: FirstTokenApp) -> list[str]:
    return [view.ROLE_TITLE for view in shown_views(app)]


async def test_enter_shows_the_spare_blocks_instead_of_mounting(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        user_spare, reply_spare = await spares_ready(pilot)
        assert not user_spare.display and not reply_spare.display, "hidden until used"
        await send_and_wait(pilot, "first, reply 12 tokens")
        assert shown_views(app) == [user_spare, reply_spare]
        assert reply_spare.source.strip() and not is_spare(reply_spare)
        # Ready again for the next turn, always after the shown messages.
        next_user, next_reply = await spares_ready(pilot)
        assert list(app.query_one(ChatLog).children)[-2:] == [next_user, next_reply]
        await send_and_wait(pilot, "second, reply 12 tokens")
        assert shown_views(app)[-2:] == [next_user, next_reply]
        assert roles(app) == ["you", "assistant", "you", "assistant"]


async def test_retry_and_errors_keep_the_conversation_order(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await spares_ready(pilot)
        await send_and_wait(pilot, "once, reply 8 tokens")
        await spares_ready(pilot)
        before = app.chat_screen.last_record
        await pilot.press("f5")  # retry: a reply with no new user message
        await wait_for(
            pilot, lambda: app.chat_screen.last_record is not before and not app.chat_screen.busy
        )
        assert roles(app) == ["you", "assistant"]
        await spares_ready(pilot)
        await send_and_wait(pilot, "again, reply 8 tokens")
        assert roles(app) == ["you", "assistant", "you", "assistant"]
        assert [v.message_index for v in shown_views(app)] == [0, 1, 2, 3]


async def test_new_chat_and_a_loaded_conversation_get_fresh_spares(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "hi, reply 5 tokens")
        await spares_ready(pilot)
        await app.chat_screen.load_messages(
            [{"role": "user", "content": "loaded"}, {"role": "assistant", "content": "answer"}]
        )
        await spares_ready(pilot)
        assert roles(app) == ["you", "assistant"]
        await send_and_wait(pilot, "next, reply 5 tokens")
        assert roles(app) == ["you", "assistant", "you", "assistant"]
        await pilot.press("ctrl+n")
        await spares_ready(pilot)
        assert not replies(app) and not shown_views(app)
        await send_and_wait(pilot, "fresh, reply 5 tokens")
        assert roles(app) == ["you", "assistant"]


def warm_up_done(app: FirstTokenApp) -> bool:
    chat = app.query_one(ChatLog)
    return chat._block_styles_warm and not any(
        worker.group == "warm-up-styles" and not worker.is_finished for worker in app.workers
    )


async def test_the_first_reply_adds_no_styles_to_the_stylesheet(demo: DemoThread) -> None:
    # Textual parses the whole stylesheet again when a widget class is first mounted; the
    # idle warm-up has mounted every block kind, so the first reply's writes do not pay for it.
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await spares_ready(pilot)
        await wait_for(pilot, lambda: warm_up_done(app), what="the style warm-up")
        sources = set(app.stylesheet.source)
        probes = [v for v in app.query(AssistantMessage) if v not in spares(app)]
        assert not probes, "the warm-up's hidden reply is removed"
        await send_and_wait(pilot, "first, reply 120 tokens")  # heading, lists, code fence
        blocks = {type(block).__name__ for block in replies(app)[0].markdown.children}
        assert {"MarkdownH2", "MarkdownParagraph", "MarkdownBulletList"} <= blocks, blocks
        assert set(app.stylesheet.source) == sources


async def test_showing_a_spare_block_restyles_nothing(demo: DemoThread, monkeypatch: Any) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await spares_ready(pilot)
        restyled: list[Any] = []
        update_styles = type(app).update_styles

        def counted(self: FirstTokenApp, node: Any, **options: Any) -> None:
            restyled.append(node)
            update_styles(self, node, **options)

        monkeypatch.setattr(type(app), "update_styles", counted)
        chat = app.query_one(ChatLog)
        user = chat.add_message(0, {"role": "user", "content": "hi"})
        reply = chat.next_reply(1, "m")
        chat.show_reply(reply)
        assert user.display and reply.display and not spares(app)
        assert not [node for node in restyled if node in (user, reply)], restyled


async def test_the_next_turns_blocks_share_the_records_layout(
    demo: DemoThread, monkeypatch: Any
) -> None:
    # Once the reply's last words are on screen, the record goes to the panel and the next
    # turn's hidden blocks are mounted in the same handling, before the record's layout, so
    # they can share it. (Counted at the mount itself: counting layouts afterwards races with
    # the mount's own messages, which can finish after the record's two layout passes.)
    app = make_app(demo.base_url)
    recorded = [False]
    layouts = record_layouts(monkeypatch, note=lambda: recorded[0])  # after the record?
    show_record = LatencyPanel.show_record
    prepared: list[int] = []  # at each mount of the next turn's blocks after the record:
    prepare_turn = ChatLog.prepare_turn  # the layouts since the record

    def noted(panel: LatencyPanel, record: Any) -> None:
        recorded[0] = True
        show_record(panel, record)

    def noted_prepare(chat: ChatLog) -> None:
        if recorded[0]:
            prepared.append(layouts.count(True))
        prepare_turn(chat)

    monkeypatch.setattr(LatencyPanel, "show_record", noted)
    monkeypatch.setattr(ChatLog, "prepare_turn", noted_prepare)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await spares_ready(pilot)
        await send_and_wait(pilot, "first, reply 12 tokens")
        await spares_ready(pilot)
        await wait_for(pilot, lambda: settled(app), what="an idle screen")
        # Mounted before any layout after the record (mounted after its frame, it would be a
        # layout of its own).
        assert prepared[:1] == [0], (prepared, layouts)
