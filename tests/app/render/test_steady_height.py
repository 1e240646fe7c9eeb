"""A streamed write that keeps its block's height asks for no layout; one that adds a line
gets one. Either way the terminal shows what a full repaint would."""

from __future__ import annotations

from typing import Any

from helpers.app_pilot import WidgetsInApp, record_layouts, wait_for
from helpers.virtual_terminal import VirtualTerminal, settled
from textual.widgets._markdown import MarkdownParagraph

from tui.app.chat.chat_log import ChatLog
from tui.app.chat.message_view import AssistantMessage

SENTENCE = "The reply streams in a few words at a time, as a model sends them to the app"


async def test_a_write_that_keeps_the_height_lays_nothing_out(monkeypatch: Any) -> None:
    layouts = record_layouts(monkeypatch)
    app = WidgetsInApp(ChatLog(id="chat"))
    async with app.run_test(size=(50, 24)) as pilot:
        terminal = VirtualTerminal(app)
        reply = AssistantMessage(0, model="demo")
        await app.query_one(ChatLog).mount(reply)
        await reply.markdown.append("## Title\n\nStart:")
        await wait_for(pilot, lambda: settled(app), what="the first write")
        paragraph = reply.markdown.query_one(MarkdownParagraph)
        kept = grew = 0
        for word in SENTENCE.split() * 3:
            height, before = paragraph.content_size.height, len(layouts)
            await reply.markdown.append(f" {word}")
            await wait_for(pilot, lambda: settled(app), what="the write to be painted")
            assert terminal.differences() == [], word
            if paragraph.content_size.height == height:
                kept += 1
                assert len(layouts) == before, f"{word!r} kept the height but laid out"
            else:
                grew += 1
                assert len(layouts) == before + 1, f"{word!r} added a line without a layout"
        assert kept > 20 and grew >= 3, (kept, grew)
        await reply.markdown.update(reply.markdown.source)  # the final update
        await wait_for(pilot, lambda: settled(app), what="the final update")
        assert terminal.differences() == []
