"""A message's status sits on its bottom border: changing it repaints that row, not the
whole block (which for a reply is everything inside it, re-sent to the terminal several
times a second while it streams)."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.geometry import Region

import tui.app.app
from tui.app.chat.message_view import AssistantMessage

REPLY = "## Title\n\nA paragraph with *some* words.\n\n- one\n- two\n"


class OneReply(App[None]):
    CSS_PATH = Path(tui.app.app.__file__).with_name("app.tcss")  # the app's borders

    def compose(self) -> ComposeResult:
        yield AssistantMessage(0, REPLY, model="demo")


async def test_status_change_repaints_only_the_bottom_border_row() -> None:
    app = OneReply()
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(AssistantMessage)
        await pilot.pause()
        view.set_status("streaming… · 5 tok", live=True)
        await pilot.pause()
        assert "streaming…" in app.export_screenshot()

        view.set_status("TTFT 42 ms [not markup]")
        width, height = view.outer_size
        assert view._dirty_regions == {Region(0, height - 1, width, 1)}
        assert not any(block._dirty_regions for block in view.markdown.children)
        await pilot.pause()
        screen = app.export_screenshot()
        assert "TTFT&#160;42&#160;ms&#160;[not&#160;markup]" in screen
        assert "streaming…" not in screen


async def test_a_dropped_mark_covers_the_status_and_gives_it_back() -> None:
    app = OneReply()
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(AssistantMessage)
        view.set_status("TTFT 42 ms")
        view.set_dropped(True)
        await pilot.pause()
        assert "dropped" in (view.border_subtitle or "")
        view.set_status("TTFT 50 ms")  # kept for later, the mark stays
        assert "dropped" in (view.border_subtitle or "")
        view.set_dropped(False)
        await pilot.pause()
        assert view.border_subtitle == "TTFT 50 ms"


async def test_a_reply_that_grew_repaints_only_its_status_row_when_the_status_changes() -> None:
    # Growing (a layout pass) repaints the reply's old and new regions in that frame; nothing
    # of it may be left over for the next status change to repaint again.
    app = OneReply()
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(AssistantMessage)
        await pilot.pause()
        height = view.outer_size.height
        await view.markdown.append("\n\nA new paragraph makes the reply taller.")
        await pilot.pause()
        assert view.outer_size.height > height
        view.set_status("TTFT 42 ms")
        width, height = view.outer_size
        assert view._repaint_regions == {Region(0, height - 1, width, 1)}
        await pilot.pause()
        assert "TTFT&#160;42&#160;ms" in app.export_screenshot()
