"""What the app's frames leave on the terminal equals a full repaint, after every write of a
streaming reply (headless, through the in-memory terminal of virtual_terminal.py).

The app skips work Textual would do on each write: a growing reply repaints only its new
rows, a block mounted while streaming is painted by the layout that places it (no repaint of
its own), and the chat's scrollbar is painted in the layout's frame. Each of those, wrong,
leaves stale cells; a check after every write finds them."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.app_pilot import WidgetsInApp, make_app, send, wait_for, wait_ready
from helpers.virtual_terminal import VirtualTerminal, settled
from textual.widgets._markdown import MarkdownHeader, MarkdownParagraph

from tui.app.chat.chat_log import ChatLog
from tui.app.chat.message_view import AssistantMessage
from tui.demo import DemoThread

TEXT_BLOCKS = (MarkdownParagraph, MarkdownHeader)
PARTS = [
    "## A heading\n\nThe first paragraph, which wraps once the pane is narrow enough to wrap.",
    " It grows on the same line",
    " and then some more.\n\nA second paragraph",
    ".\n\n- a list item\n- another",
    " one, longer\n  1. nested\n\n> a quote\n\n```python\nprint('code')\n",
    "x = 1\n```\n\n",
    *[f"Paragraph {n} says a few words, to scroll the pane.\n\n" for n in range(12)],
    "The end.",
]


async def test_each_write_leaves_the_terminal_as_a_full_repaint_would() -> None:
    app = WidgetsInApp(ChatLog(id="chat"))
    async with app.run_test(size=(60, 18)) as pilot:
        terminal = VirtualTerminal(app)
        reply = AssistantMessage(0, model="demo")
        await app.query_one(ChatLog).mount(reply)
        await pilot.pause()
        frames: dict[str, int] = {}
        for part in PARTS:
            before = terminal.frames
            await reply.markdown.append(part)
            await wait_for(pilot, lambda: settled(app), what="the write to be painted")
            assert terminal.differences() == [], part
            frames[part] = terminal.frames - before
        assert app.query_one(ChatLog).vertical_scrollbar.display  # it scrolled
        # A write that adds a paragraph, scrolling the pane, takes one frame: the new block
        # and the scrollbar are painted in the layout's frame, not in frames of their own.
        paragraphs = [part for part in PARTS if part.startswith("Paragraph")]
        assert [frames[part] for part in paragraphs] == [1] * len(paragraphs)
        await reply.markdown.update(reply.markdown.source)  # the final update
        await wait_for(pilot, lambda: settled(app), what="the final update to be painted")
        assert terminal.differences() == []


@pytest.mark.e2e
async def test_the_app_streaming_a_reply_leaves_the_terminal_as_a_full_repaint_would(
    slow_demo: DemoThread,
) -> None:
    # 60 tokens/s for ~3 s: the loop below must catch the screen settled between writes, and
    # on a loaded machine a faster stream (400 tokens/s) can end before it does.
    app = make_app(slow_demo.base_url, chunk_timeout_ms=30_000)
    async with app.run_test(size=(110, 30)) as pilot:
        terminal = VirtualTerminal(app)
        await wait_ready(pilot)
        await send(pilot, "a list and code, reply 200 tokens")
        checked = 0

        async def check_when_settled() -> bool:
            nonlocal checked
            if settled(app):
                checked += 1
                assert terminal.differences() == []
            return app.chat_screen.last_record is not None and not app.chat_screen.busy

        for _ in range(3000):
            if await check_when_settled():
                break
            await pilot.pause(0.01)
        await wait_for(pilot, lambda: settled(app), what="the end of the reply to be painted")
        assert terminal.differences() == []
        assert checked


async def test_a_block_mounted_by_a_write_asks_for_no_repaint_of_its_own(monkeypatch: Any) -> None:
    # Its text is set before it is mounted; the layout that places it paints it (checked
    # above), so a repaint request of its own would only cost another frame. (A list or a
    # quote still asks for one as Textual mounts its rows: those are not checked here.)
    app = WidgetsInApp(ChatLog(id="chat"))
    async with app.run_test(size=(60, 18)) as pilot:
        reply = AssistantMessage(0, model="demo")
        await app.query_one(ChatLog).mount(reply)
        await pilot.pause()
        repainted: list[Any] = []
        screen_class = type(app.screen)
        on_update = screen_class._on_update

        async def recorded(screen: Any, message: Any) -> None:
            repainted.append(message.widget)
            await on_update(screen, message)

        # On the class: Textual finds message handlers there, not on the instance.
        monkeypatch.setattr(screen_class, "_on_update", recorded)
        writes_that_mounted = 0
        for part in PARTS:
            shown = set(reply.markdown.query("*"))
            await reply.markdown.append(part)
            await wait_for(pilot, lambda: settled(app), what="the write to be painted")
            blocks = {
                widget
                for widget in set(reply.markdown.query("*")) - shown
                if widget.parent is reply.markdown and isinstance(widget, TEXT_BLOCKS)
            }
            writes_that_mounted += bool(blocks)
            assert not blocks & set(repainted), part
        assert writes_that_mounted > len(PARTS) // 2
        assert repainted  # recorded: the growing paragraph asks for its repaints
