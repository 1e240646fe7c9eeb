"""Lines Textual keeps rendered (its styles cache) stay right while a reply streams.

A growing reply's block and Markdown keep the lines above their old bottom edge instead of
re-rendering their whole height each write, and the chat pane's scrollbar re-renders only
when what it draws changes. Each check compares what the widget would paint from its cache
with what it paints after the cache is dropped, after every write."""

from __future__ import annotations

import itertools
from typing import Any

from helpers.app_pilot import WidgetsInApp
from rich.color import Color
from textual.scrollbar import ScrollBarRender
from textual.widget import Widget

from tui.app.chat.chat_log import ChatLog
from tui.app.chat.message_view import AssistantMessage
from tui.app.render.steady_scrollbar import SteadyScrollBar, thumb_eighths


def count_renders(bar: Any) -> list[None]:
    """One item per call of the bar's `render` from now on (clear it to count again)."""
    renders: list[None] = []
    render = bar.render

    def counted_render() -> Any:
        renders.append(None)
        return render()

    bar.render = counted_render
    return renders


def painted(widget: Widget) -> list[Any]:
    return widget.render_lines(widget.size.region)


def painted_afresh(widget: Widget) -> list[Any]:
    """What the widget paints from its current state, with nothing cached."""
    widget._styles_cache.clear()
    widget._render_content()  # its content too: it is re-rendered only when marked dirty
    return Widget.render_lines(widget, widget.size.region)  # not the SteadyScrollBar's


PARTS = [f"\n\nParagraph {n}: some words, then **more** words to wrap." for n in range(30)]
PARTS[7] = "\n\n- a list\n- that grows"
PARTS[8] = "\n- by an item\n\n> and a quote"


async def stream_into_chat(pilot: Any, check: Any) -> None:
    chat = pilot.app.query_one(ChatLog)
    reply = AssistantMessage(0, "## Title\n", model="demo")
    await chat.mount(reply)
    await pilot.pause()
    for part in PARTS:
        await reply.markdown.append(part)
        await pilot.pause()
        check(reply)


async def test_a_growing_reply_paints_from_its_cache_what_it_would_paint_afresh() -> None:
    missing_lines = total_lines = 0

    def check(reply: AssistantMessage) -> None:
        nonlocal missing_lines, total_lines
        growing = [reply, reply.markdown, *reply.markdown.query("MarkdownBulletList")]
        for widget in growing:
            cache = widget._styles_cache
            missing_lines += sum(1 for y in range(widget.size.height) if y not in cache._cache)
            total_lines += widget.size.height
            assert painted(widget) == painted_afresh(widget), type(widget).__name__

    async with WidgetsInApp(ChatLog(id="chat")).run_test(size=(70, 30)) as pilot:
        await stream_into_chat(pilot, check)
    # The cache is used: most lines were kept between writes (Textual drops them all when
    # a widget grows, so all would be missing).
    assert missing_lines < 0.3 * total_lines


async def test_the_chat_scrollbar_paints_what_a_fresh_render_would() -> None:
    checked = 0

    def check(reply: AssistantMessage) -> None:
        nonlocal checked
        bar = reply.parent.vertical_scrollbar  # type: ignore[union-attr]
        assert isinstance(bar, SteadyScrollBar)
        if bar.display and bar.size:
            checked += 1
            assert painted(bar) == painted_afresh(bar)

    async with WidgetsInApp(ChatLog(id="chat")).run_test(size=(70, 16)) as pilot:
        await stream_into_chat(pilot, check)
        assert checked  # the reply overflowed: the scrollbar was shown and checked

        # Following the end of a long chat, the thumb stays put (bottom, one cell): growing
        # by a line changes the figures but not the cells, and renders nothing again.
        bar = pilot.app.query_one(ChatLog).vertical_scrollbar
        renders = count_renders(bar)
        window = bar.window_size
        bar.window_virtual_size, bar.position = 5000, 5000 - window
        await pilot.pause()
        assert painted(bar) == painted_afresh(bar)
        renders.clear()
        bar.window_virtual_size, bar.position = 5001, 5001 - window
        await pilot.pause()
        assert painted(bar) and len(renders) == 0
        bar.position = 0  # the thumb moves to the top: rendered again
        assert painted(bar) == painted_afresh(bar) and renders


def test_thumb_eighths_tells_apart_every_bar_textual_draws_differently() -> None:
    # Two states with the same eighths must draw the same cells (and so need no repaint).
    drawn: dict[Any, Any] = {}
    back, bar = Color.parse("#202020"), Color.parse("#f0f0f0")
    for length, virtual, window in itertools.product((5, 12, 30), (10, 31, 97, 400), (4, 12)):
        if window >= virtual:
            continue
        for position in (step / 8 for step in range(0, (virtual - window) * 8 + 1, 3)):
            key = (length, thumb_eighths(length, virtual, window, position))
            segments = ScrollBarRender.render_bar(
                length, virtual, window, position, 1, True, back, bar
            )
            cells = [(segment.text, segment.style) for segment in segments.segments]
            assert drawn.setdefault(key, cells) == cells, (length, virtual, window, position)
    assert len(drawn) > 50  # many different bars were drawn


async def test_a_moving_thumb_is_put_together_from_rows_rendered_before() -> None:
    async with WidgetsInApp(ChatLog(id="chat")).run_test(size=(70, 16)) as pilot:
        await stream_into_chat(pilot, lambda reply: None)
        bar = pilot.app.query_one(ChatLog).vertical_scrollbar
        assert isinstance(bar, SteadyScrollBar) and bar.display
        renders = count_renders(bar)
        window = bar.window_size
        states = [
            (virtual, eighth / 8)
            for virtual in (90, 95, 160, 400)
            for eighth in range(0, 8 * (virtual - window), 7)
        ]
        drawn = set()
        own = 0  # renders of the bar's own painting (painted_afresh renders each time)
        for virtual, position in states:
            bar.window_virtual_size, bar.position = virtual, position
            renders.clear()
            lines = painted(bar)
            own += len(renders)
            assert lines == painted_afresh(bar), (virtual, position)
            drawn.add(tuple(tuple(line) for line in lines))
        assert len(drawn) > 100  # the thumb was drawn in many places and sizes...
        assert own < 0.2 * len(drawn)  # ...mostly from rows rendered before

        # Another look (hovered: other colours) is not put together from the old rows.
        bar.mouse_over = True
        assert painted(bar) == painted_afresh(bar)
