"""A reply's list item that is one paragraph is that paragraph alone, drawing its own bullet
(render/list_rows), where Textual's list shows a row, a bullet and a column around it: one
widget per item, painted the same as Textual's own list (checked here and, after every write
of random chunkings, in test_final_update), selected and clicked the same."""

from __future__ import annotations

from typing import Any

from test_final_update import SideBySide, painted, shown
from textual.geometry import Offset
from textual.selection import SELECT_ALL, Selection
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownList, MarkdownParagraph

from benchmarks.render.dense_reply import dense_markdown
from tui.app.render.settled_blocks import SettledLines
from tui.app.widgets.message_view import AssistantMessage

LISTS = dense_markdown("lists", 20, 500)  # every fourth list has a nested item
ORDERED = "".join(f"{number}. step {number} of the plan\n" for number in range(1, 13))


def items(markdown: Markdown) -> list[str]:
    """What each item of the Markdown's lists is shown as, by class, in order (nested too)."""
    return [
        type(child).__name__ for block in markdown.query(MarkdownList) for child in block.children
    ]


def bullets(markdown: Markdown) -> list[str]:
    """The bullets the reply's one-paragraph items draw, in order."""
    return [
        paragraph.bullet
        for paragraph in markdown.query(MarkdownParagraph)
        if getattr(paragraph, "bullet", "")
    ]


async def side_by_side(
    app: SideBySide, pilot: Any, parts: list[str], *, tree: bool = True
) -> tuple[Markdown, Markdown]:
    """Stream `parts` into the reply and into Textual's Markdown, comparing what they paint
    (and their widget trees, as Textual builds them) after every write."""
    ours = app.query_one(AssistantMessage).markdown
    stock = app.query_one("#stock", Markdown)
    for part in parts:
        await ours.append(part)
        await stock.append(part)
        await pilot.pause()
        assert painted(ours) == painted(stock), f"after {ours.source!r}"
        if tree:
            assert shown(ours) == shown(stock), f"after {ours.source!r}"
    return ours, stock


async def test_a_one_paragraph_item_is_one_widget() -> None:
    app = SideBySide("")
    async with app.run_test() as pilot:
        ours, stock = await side_by_side(app, pilot, [LISTS[:250], LISTS[250:]], tree=False)
        shown_items, textuals = items(ours), items(stock)
        assert len(shown_items) == len(textuals) > 20
        assert all(kind == "Horizontal" for kind in textuals)
        assert shown_items.count("MarkdownParagraph") > 20
        # An item with a nested list keeps Textual's row (bullet, then a column).
        assert "Horizontal" in shown_items
        assert len(list(ours.walk_children())) < len(list(stock.walk_children())) / 2


async def test_an_item_that_gains_a_nested_list_switches_to_a_row_in_place() -> None:
    app = SideBySide("")
    async with app.run_test() as pilot:
        parts = ["- one\n- tw", "o\n", "  - nested\n", "- three\n"]
        ours, stock = await side_by_side(app, pilot, parts)
        # The outer list's items, then the nested list's.
        assert items(ours) == [
            "MarkdownParagraph",
            "Horizontal",
            "MarkdownParagraph",
            "MarkdownParagraph",
        ]
        # The final update of a reply whose item lost its nested list again.
        await ours.update("- one\n- two\n")
        await stock.update("- one\n- two\n")
        await pilot.pause()
        assert len(items(ours)) == 2
        assert painted(ours) == painted(stock)
        assert shown(ours) == shown(stock)


async def test_ordered_items_take_the_wider_number_when_the_tenth_arrives() -> None:
    app = SideBySide("")
    async with app.run_test() as pilot:
        cut = ORDERED.index("10.")
        parts = [ORDERED[:cut], ORDERED[cut : cut + 2], ORDERED[cut + 2 :]]
        ours, _ = await side_by_side(app, pilot, parts)
        assert bullets(ours) == [f"{number}. ".rjust(5) for number in range(1, 13)]


async def test_a_light_theme_paints_the_bullets_as_textual_does() -> None:
    app = SideBySide("")
    async with app.run_test() as pilot:
        app.theme = "textual-light"
        await pilot.pause()
        ours, stock = await side_by_side(app, pilot, ["- one\n- two *em*\n\n", ORDERED[:40]])
        assert bullets(ours)
        # The bullet's colour differs between the dark and light themes (Textual's CSS).
        light = painted(ours)
        app.theme = "textual-dark"
        await pilot.pause()
        assert painted(ours) == painted(stock) != light


def shown_widgets(markdown: Markdown) -> list[Widget]:
    """The widgets inside a Markdown (the reply's settled lines hold nothing here)."""
    return [w for w in markdown.walk_children() if not isinstance(w, SettledLines)]


def selected_text(app: SideBySide, markdown: Markdown, selections: dict[Widget, Any]) -> str:
    app.screen.selections = selections
    text = app.screen.get_selected_text() or ""
    app.screen.clear_selection()
    return text


async def test_a_selection_gives_the_bullets_as_textuals_list_does() -> None:
    text = "- one [link](https://example.com)\n- two\n  more\n\n3. three\n4. four\n"
    app = SideBySide("")
    async with app.run_test() as pilot:
        ours, stock = await side_by_side(app, pilot, [text])
        everything = [
            selected_text(app, markdown, {w: SELECT_ALL for w in shown_widgets(markdown)})
            for markdown in (ours, stock)
        ]
        assert everything[0] == everything[1]
        assert "•  one link\n•  two more\n" in everything[0]
        assert everything[0].endswith(" 3.  three\n 4.  four")
        # A selection from the middle of an item's text leaves its bullet out.
        ours_one = ours.query(MarkdownParagraph).first()
        stock_one = stock.query(MarkdownParagraph).first()
        middle = Selection(Offset(2, 0), None)
        assert selected_text(app, ours, {ours_one: middle}) == "e link"
        assert selected_text(app, stock, {stock_one: middle}) == "e link"


async def test_a_link_in_a_one_paragraph_item_is_clicked_as_in_textuals() -> None:
    clicked: list[tuple[str, str]] = []

    class Clicks(SideBySide):
        def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
            clicked.append((event.markdown.id or "reply", event.href))

    app = Clicks("")
    async with app.run_test() as pilot:
        ours, stock = await side_by_side(app, pilot, ["- see [the docs](https://example.com)\n"])
        for markdown in (stock, ours):
            row = markdown.query_one(MarkdownList).region
            column = len("• see ") + 2  # inside "the docs"
            x, y = row.x - markdown.region.x + column, row.y - markdown.region.y
            await pilot.click(markdown, offset=(x, y))
            await pilot.pause()
        assert clicked == [("stock", "https://example.com"), ("reply", "https://example.com")]
