"""A reply's list item that is one paragraph shows the paragraph beside its bullet, without
the column Textual puts around an item's blocks (reply_blocks.item_column): one widget fewer
per item, painted the same as Textual's own list (checked here and, after every write of
random chunkings, in test_final_update)."""

from __future__ import annotations

from typing import Any

from test_final_update import SideBySide, is_item_column, painted
from textual.containers import Horizontal
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownList

from benchmarks.render.dense_reply import dense_markdown
from tui.app.widgets.message_view import AssistantMessage

LISTS = dense_markdown("lists", 20, 500)  # every fourth list has a nested item


def rows(markdown: Markdown) -> list[list[str]]:
    """Each list row's children, by class, in order (nested lists too)."""
    return [
        [type(child).__name__ for child in row.children]
        for row in markdown.query(Horizontal)
        if isinstance(row.parent, MarkdownList)
    ]


async def side_by_side(app: SideBySide, pilot: Any, parts: list[str]) -> tuple[Markdown, Markdown]:
    ours = app.query_one(AssistantMessage).markdown
    stock = app.query_one("#stock", Markdown)
    for part in parts:
        await ours.append(part)
        await stock.append(part)
        await pilot.pause()
        assert painted(ours) == painted(stock), f"after {ours.source!r}"
    return ours, stock


async def test_a_one_paragraph_item_shows_its_paragraph_beside_its_bullet() -> None:
    app = SideBySide("")
    async with app.run_test() as pilot:
        ours, stock = await side_by_side(app, pilot, [LISTS[:250], LISTS[250:]])
        shown, textuals = rows(ours), rows(stock)
        assert len(shown) == len(textuals) > 20
        assert shown.count(["MarkdownBullet", "MarkdownParagraph"]) > 20
        assert all(row == ["MarkdownBullet", "Vertical"] for row in textuals)
        # An item with a nested list keeps its column (paragraph, then the list).
        columns = [row.children[-1] for row in ours.query(Horizontal)]
        assert any(is_item_column(column) and column.query(MarkdownList) for column in columns)
        assert len(list(ours.walk_children())) < len(list(stock.walk_children()))


async def test_an_item_that_gains_a_nested_list_gets_its_column() -> None:
    app = SideBySide("")
    async with app.run_test() as pilot:
        ours, stock = await side_by_side(app, pilot, ["- one\n- tw", "o\n", "  - nested\n"])
        assert rows(ours)[:2] == [
            ["MarkdownBullet", "MarkdownParagraph"],
            ["MarkdownBullet", "Vertical"],
        ]
        # The final update of a reply whose item lost its nested list again.
        await ours.update("- one\n- two\n")
        await stock.update("- one\n- two\n")
        await pilot.pause()
        assert len(rows(ours)) == 2
        assert painted(ours) == painted(stock)
