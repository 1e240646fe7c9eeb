"""A streamed reply's settled blocks are folded into lines rendered once (settled_blocks): a
write late in a long reply arranges only the live tail, and the folded lines still paint,
select, link and scroll as the blocks did. What they paint is checked against Textual's own
Markdown here after a resize and a theme change (and after every write in test_final_update).
"""

from __future__ import annotations

from typing import Any

from test_final_update import SideBySide, painted
from textual.app import App, ComposeResult
from textual.geometry import Offset
from textual.layouts.vertical import VerticalLayout
from textual.selection import Selection
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence

import tui.app.render.reply_blocks as reply_blocks
from benchmarks.render.dense_reply import dense_markdown
from tui.app.chat.message_view import AssistantMessage
from tui.app.render.settled_blocks import SettledLines, arrange_blocks

LISTS = dense_markdown("lists", 20, 700)
CODE = dense_markdown("code", 40, 500)  # every third code block wider than the reply
# Lists that keep Textual's rows: an item holds code.
ROW_LISTS = "\n\n".join(
    f"Paragraph {n}.\n\n- item {n}\n- with code\n  ```\n  x = {n}\n  ```" for n in range(14)
)
LINKED = "A [first link](https://example.com/one) here.\n\nA paragraph after it.\n\n- a list\n"


class ReplyOnly(App[None]):
    """One reply block on the screen, at the top."""

    def compose(self) -> ComposeResult:
        yield AssistantMessage(0, "")


async def stream(app: App[Any], pilot: Any, text: str, step: int = 60) -> Any:
    """Append `text` to the app's reply (and to its stock Markdown if it has one) in writes of
    `step` characters, each laid out and painted before the next, as a stream's are."""
    markdown = app.query_one(AssistantMessage).markdown
    stock = app.query("#stock").first(Markdown) if app.query("#stock") else None
    for at in range(0, len(text), step):
        await markdown.append(text[at : at + step])
        if stock is not None:
            await stock.append(text[at : at + step])
        await pilot.pause()
    return markdown


async def children_arranged_by_last_write(text: str) -> int:
    """How many widgets the reply's Markdown arranged in the layout after the last write."""
    arranged: list[int] = []
    arrange = VerticalLayout.arrange

    def counted(self: Any, parent: Widget, children: list[Widget], *args: Any, **kw: Any) -> Any:
        if isinstance(parent, reply_blocks.ReplyMarkdown):
            arranged.append(len(children))
        return arrange(self, parent, children, *args, **kw)

    app = ReplyOnly()
    async with app.run_test() as pilot:
        await stream(app, pilot, text[:-30])
        VerticalLayout.arrange = counted  # type: ignore[method-assign]
        try:
            await stream(app, pilot, text[-30:])
        finally:
            VerticalLayout.arrange = arrange  # type: ignore[method-assign]
    return max(arranged)


async def test_a_late_write_arranges_the_live_tail_only() -> None:
    folded = await children_arranged_by_last_write(LISTS)
    assert folded <= 3  # the settled lines, the block that settled last, the last block


async def test_every_block_is_arranged_when_none_is_folded(monkeypatch: Any) -> None:
    # The same measure with folding switched off: the count grows with the reply.
    def unfolded(markdown: Any, fold: Any, blocks: Any, size: Any, optimal: bool) -> Any:
        return arrange_blocks(markdown, blocks, size, optimal)

    monkeypatch.setattr(reply_blocks, "arrange_settled", unfolded)
    assert await children_arranged_by_last_write(LISTS) > 20


async def test_folded_lines_are_selected_as_shown_text() -> None:
    app = ReplyOnly()
    async with app.run_test() as pilot:
        markdown = await stream(app, pilot, LISTS)
        fold = markdown.query_one(SettledLines)
        assert len(fold.folded) > 10
        first_item = next(line for line in fold.texts if "item 0.0" in line)
        app.screen.selections = {fold: Selection(None, None)}
        text = app.screen.get_selected_text() or ""
        assert text.splitlines()[0].strip() == fold.texts[0].strip() != ""
        assert first_item in text and text.count("item 0.0") == 1
        # The offset under the mouse is the fold's own (line, column), as its text has them.
        region = fold.region
        y = fold.texts.index(first_item)
        widget, offset = app.screen.get_widget_and_offset_at(region.x + 4, region.y + y)
        assert widget is fold and offset == Offset(4, y)


async def test_a_link_in_folded_lines_posts_what_the_block_posts() -> None:
    clicked: list[str] = []

    class Links(ReplyOnly):
        def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
            if event.markdown is self.query_one(AssistantMessage).markdown:
                clicked.append(event.href)

    app = Links()
    async with app.run_test() as pilot:
        markdown = await stream(app, pilot, LINKED, step=10)
        fold = markdown.query_one(SettledLines)
        assert fold.folded  # the linked paragraph is folded
        y = next(index for index, line in enumerate(fold.texts) if "first link" in line)
        x = fold.texts[y].index("first link") + 2
        await pilot.click(offset=fold.region.offset + Offset(x, y))
        await pilot.pause()
        assert clicked == ["https://example.com/one"]


async def test_a_wide_code_block_goes_live_over_its_folded_rows_under_the_pointer() -> None:
    app = ReplyOnly()
    async with app.run_test(size=(80, 60)) as pilot:
        markdown = await stream(app, pilot, CODE)
        fold = markdown.query_one(SettledLines)
        wide = [entry for entry in fold.folded if entry.scrolls]
        assert wide and all(isinstance(entry.block, MarkdownFence) for entry in wide)
        entry = wide[0]
        index, fence = fold.folded.index(entry), entry.block
        assert not entry.on_top and fence not in app.screen._compositor.visible_widgets
        await pilot.hover(fold, offset=(fold.region.width // 2, entry.top + 1))
        await pilot.pause()
        assert fold.folded[index].on_top and fold.folded[index].block is fence
        assert fence.max_scroll_x > 0 and fence in app.screen._compositor.visible_widgets
        assert fence.region.y == fold.region.y + entry.top  # over its own rows
        fence.scroll_to(x=fence.max_scroll_x, animate=False, immediate=True)
        await pilot.pause()
        rows = app.screen._compositor.render_strips()[fence.region.y : fence.region.bottom]
        shown = ["".join(segment.text for segment in row) for row in rows]
        assert any("layout_ms)" in row for row in shown)  # its long line's end, scrolled to


async def test_a_narrower_reply_is_painted_as_textual_paints_it() -> None:
    app = SideBySide("")
    async with app.run_test(size=(80, 24)) as pilot:
        markdown = await stream(app, pilot, LISTS)
        assert markdown.query_one(SettledLines).folded
        await pilot.resize_terminal(57, 24)
        await pilot.pause()
        await pilot.pause()
        assert painted(markdown) == painted(app.query_one("#stock", Markdown))


async def test_a_new_theme_is_painted_as_textual_paints_it() -> None:
    app = SideBySide("")
    async with app.run_test() as pilot:
        markdown = await stream(app, pilot, CODE)
        blocks = list(markdown.query_children(MarkdownBlock))
        assert len(markdown.query_one(SettledLines).folded) >= len(blocks) // 2
        app.theme = "textual-light"
        await pilot.pause()
        await pilot.pause()
        assert painted(markdown) == painted(app.query_one("#stock", Markdown))


async def test_folding_a_list_renders_only_what_shows_of_it(monkeypatch: Any) -> None:
    # A list's rows, columns and the list itself lie behind its bullets and paragraphs on
    # every row: folding it renders the widgets in front only (the lines are Textual's, as
    # the side-by-side tests check). A list that draws its items is one widget.
    in_fold: list[str] = []
    folding = False
    render_lines, fold = Widget.render_lines, SettledLines.fold

    def counted(self: Widget, crop: Any) -> Any:
        if folding:
            in_fold.append(type(self).__name__)
        return render_lines(self, crop)

    def fold_counted(self: SettledLines, block: Widget) -> None:
        nonlocal folding
        folding = True
        try:
            fold(self, block)
        finally:
            folding = False

    monkeypatch.setattr(Widget, "render_lines", counted)
    monkeypatch.setattr(SettledLines, "fold", fold_counted)
    app = ReplyOnly()
    async with app.run_test() as pilot:
        markdown = await stream(app, pilot, LISTS)
        assert len(markdown.query_one(SettledLines).folded) > 10
    assert "MarkdownBulletList" in in_fold and "MarkdownBullet" not in in_fold
    in_fold.clear()
    app = ReplyOnly()
    async with app.run_test() as pilot:
        markdown = await stream(app, pilot, ROW_LISTS)
        assert len(markdown.query_one(SettledLines).folded) > 10
    assert "MarkdownBullet" in in_fold and "MarkdownParagraph" in in_fold
    # (The column shows in the code block's margins, above and below it.)
    assert not {"Horizontal", "MarkdownBulletList"} & set(in_fold)
