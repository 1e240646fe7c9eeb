"""The first and the last words of a reply are laid out and painted as soon as they are in
the widget, not at the screen's next frame tick; the writes in between wait for it."""

from __future__ import annotations

from typing import Any

from helpers.app_pilot import WidgetsInApp, wait_for

from tui.app.chat.message_view import AssistantMessage
from tui.app.chat.reply_writer import ReplyWriter
from tui.app.render.paint_now import paint_now


async def test_the_writer_paints_its_first_and_last_writes_at_once(monkeypatch: Any) -> None:
    painted_after: list[int] = []
    monkeypatch.setattr(
        "tui.app.chat.reply_writer.paint_now", lambda app: painted_after.append(writer.writes)
    )
    app = WidgetsInApp(AssistantMessage(0, "", model="demo"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = app.query_one(AssistantMessage)
        writer = ReplyWriter(view.markdown)
        writer.start()
        # Each write awaited before the next is fed: six writes, however loaded the machine.
        for n, words in enumerate(["First words.", *(f" and {n} more" for n in range(4))]):
            writer.feed(words)
            await wait_for(pilot, lambda n=n: writer.writes == n + 1, what=f"write {n + 1}")
        writer.feed(" and the last words.")
        writer.end()
        await writer.finish(None)
    assert writer.writes == 6
    assert painted_after == [1, 6]  # the first write and the last, no other


async def test_a_stream_ending_during_its_last_write_paints_that_write_once(
    monkeypatch: Any,
) -> None:
    painted_after: list[int] = []
    monkeypatch.setattr(
        "tui.app.chat.reply_writer.paint_now", lambda app: painted_after.append(writer.writes)
    )
    app = WidgetsInApp(AssistantMessage(0, "", model="demo"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        writer = ReplyWriter(app.query_one(AssistantMessage).markdown)
        writer.start()
        writer.feed("First words.")
        await wait_for(pilot, lambda: writer.writes == 1, what="the first write")
        writer.feed(" and the last ones.")
        # The second write has begun (its append may still be under way) when the stream ends,
        # with nothing after it: whichever way the append and the end fall, one paint follows.
        await wait_for(pilot, lambda: writer.writes == 2, what="the second write")
        writer.end()
        await writer.finish(None)
    assert writer.writes == 2
    assert painted_after == [1, 2]


async def test_paint_now_lays_out_and_paints_before_it_returns() -> None:
    app = WidgetsInApp(AssistantMessage(0, "", model="demo"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = app.query_one(AssistantMessage)
        await view.markdown.append("Words that wrap: " + "more words " * 20)
        screen = app.screen
        assert screen._layout_required  # Textual would lay out at its next tick
        height = view.region.height
        frames: list[int] = []
        refresh = screen._compositor_refresh
        screen._compositor_refresh = lambda: (frames.append(1), refresh())  # type: ignore[method-assign]
        paint_now(app)
        assert not screen._layout_required and not screen._dirty_widgets
        assert frames and view.region.height > height  # placed at its new size, painted


async def test_paint_now_waits_while_updates_are_held() -> None:
    app = WidgetsInApp(AssistantMessage(0, "", model="demo"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = app.query_one(AssistantMessage)
        with app.batch_update():
            await view.markdown.append("Held.")
            paint_now(app)
            assert app.screen._layout_required or app.screen._dirty_widgets  # still held
        paint_now(app)
        assert not app.screen._layout_required and not app.screen._dirty_widgets
