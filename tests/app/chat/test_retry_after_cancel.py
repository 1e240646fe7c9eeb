"""F5 after a cancelled long reply: the long reply goes, the chat is short again, and it shows
from the top as a short chat does (not bottom-aligned under blank rows until it overflows)."""

from __future__ import annotations

import dataclasses

import pytest
from helpers.app_pilot import make_app, replies, send, wait_for, wait_ready

from tui.app.chat.chat_log import ChatLog
from tui.demo import DemoThread

pytestmark = pytest.mark.e2e


def blank_rows_above(log: ChatLog) -> int:
    """Rows of the pane above its first block (its own margin aside)."""
    first = log.shown_views()[0]
    return first.region.y - first.styles.margin.top - log.content_region.y


async def test_f5_after_a_cancelled_long_reply_shows_the_short_chat_from_the_top(
    paced_demo: DemoThread,
) -> None:
    app = make_app(paced_demo.base_url)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        log = app.query_one(ChatLog)
        await send(pilot, "hello, reply 2000 tokens")
        turn = app.chat_screen.turn
        assert turn is not None
        await wait_for(
            pilot,
            lambda: log.virtual_size.height > 3 * log.scrollable_content_region.height,
            what="a reply three screens long",
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat_screen.busy, what="the cancelled reply")
        cancelled = turn.current
        # The retry streams slowly: its first words are on screen long before it fills it.
        server = paced_demo.server
        server.model = dataclasses.replace(server.model, decode_tokens_per_s=20.0)
        await pilot.press("f5")
        await wait_for(
            pilot,
            lambda: (
                turn.current is not cancelled
                and len(replies(app)) == 1
                and bool(replies(app)[0].source)
            ),
            what="the retried reply's first words",
        )
        await pilot.pause()
        shown = sum(view.outer_size.height for view in log.shown_views())
        assert shown < log.scrollable_content_region.height  # a short chat again
        assert blank_rows_above(log) == 0
        await pilot.press("escape")
