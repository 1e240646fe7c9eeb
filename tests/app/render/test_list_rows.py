"""A reply's list whose items are paragraphs (and lists like it) is one widget that draws
them (render/drawn_lists), where Textual's list shows a row, a bullet and a column around
each item's paragraph; a list holding more keeps Textual's rows, where an item that is one
paragraph is that paragraph alone, drawing its own bullet (render/list_rows). Both paint the
same as Textual's own list (checked here and, after every write of random chunkings, in
test_final_update), and are selected and clicked the same."""

from __future__ import annotations

from typing import Any

from test_final_update import SideBySide, painted, shown
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownList, MarkdownParagraph

from benchmarks.render.dense_reply import dense_markdown
from tui.app.chat.message_view import AssistantMessage
from tui.app.render.settled_blocks import SettledLines

LISTS = dense_markdown("lists", 20, 500)  # every fourth list has a nested item
ORDERED = "".join(f"{number}. step {number} of the plan\n" for number in range(1, 13))


def items(markdown: Markdown) -> list[str]:
    """What each item of the Markdown's lists is shown as, by class, in order (nested too):
    "drawn" for an item a list draws itself."""
    return [
        kind
        for block in markdown.query(MarkdownList)
        for kind in (
            ["drawn"] * len(block.drawn_items)
            if getattr(block, "drawn_items", None) is not None
            else [type(child).__name__ for child in block.children]
        )
    ]


def bullets(markdown: Markdown) -> list[str]:
    """The bullets the reply's lists draw, and its one-paragraph items, in order."""
    drawn = [
        item.symbol
        for block in markdown.query(MarkdownList)
        for item in getattr(block, "drawn_items", None) or []
    ]
    return drawn + [
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


async def test_a_list_of_paragraphs_and_nested_lists_is_one_widget() -> None:
    app = SideBySide("")
    async with app.run_test() as pilot:
        ours, stock = await side_by_side(app, pilot, [LISTS[:250], LISTS[250:]])
        lists = list(ours.query(MarkdownList))
        assert len(lists) > 5
        assert all(block.drawn_items and not block.children for block in lists)  # type: ignore[attr-defined]
        assert items(ours).count("drawn") > 20
        # Nested lists are drawn by their list too: Textual's has more lists than ours.
        assert len(stock.query(MarkdownList)) > len(lists)
        assert len(list(ours.walk_children())) < len(list(stock.walk_children())) / 4


async def test_a_drawn_list_whose_item_gains_code_switches_to_rows_and_back() -> None:
    app = SideBySide("")
    async with app.run_test() as pilot:
        parts = ["- one\n- tw", "o\n", "  ```\n  code\n  ```\n", "- three\n"]
        ours, stock = await side_by_side(app, pilot, parts)
        # The item holding code keeps Textual's row; the others are one paragraph each.
        assert items(ours) == ["MarkdownParagraph", "Horizontal", "MarkdownParagraph"]
        # The final update of a reply whose item lost its code again: drawn once more.
        await ours.update("- one\n- two\n")
        await stock.update("- one\n- two\n")
        await pilot.pause()
        assert items(ours) == ["drawn", "drawn"]
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
        # Dragged with the mouse: both lists whole, inside an item's text, from one list into
        # the next, from a bullet on (each ending off the link, which the mouse over it
        # paints in its hover style).
        drags = [((0, 0), (9, 4)), ((2, 0), (4, 0)), ((4, 0), (6, 4)), ((0, 1), (3, 3))]
        for start, end in drags:
            (text, look), (stock_text, stock_look) = [
                await dragged(app, pilot, m, start, end) for m in (ours, stock)
            ]
            assert text == stock_text, (start, end)
            # Painted the same while selected (but for the link's underline, which Textual
            # leaves off a paragraph's link while a selection is made).
            assert without_underline(look) == without_underline(stock_look), (start, end)
        assert (await dragged(app, pilot, ours, (0, 0), (9, 4)))[0] == (
            "•  one link\n•  two more\n 3.  three\n 4.  four"
        )
        assert (await dragged(app, pilot, ours, (4, 0), (8, 0)))[0] == "e lin"


async def dragged(
    app: SideBySide, pilot: Any, markdown: Markdown, start: tuple[int, int], end: tuple[int, int]
) -> tuple[str, Any]:
    """The text a mouse drag selects from `start` to `end` (column, row of the Markdown's
    first list), and what the Markdown paints while it is selected."""
    await drag(pilot, markdown, start, end)
    text = app.screen.get_selected_text() or ""
    highlighted = painted(markdown)
    app.screen.clear_selection()
    await pilot.pause()
    assert painted(markdown) != highlighted  # the selection was painted
    return text, highlighted


def without_underline(look: Any) -> Any:
    rows = []
    for row in look:
        joined: list[tuple[str, str]] = []
        for text, style in row:
            style = style.replace("underline ", "")
            if joined and joined[-1][1] == style:
                joined[-1] = (joined[-1][0] + text, style)
            else:
                joined.append((text, style))
        rows.append(joined)
    return rows


async def drag(
    pilot: Any, markdown: Markdown, start: tuple[int, int], end: tuple[int, int]
) -> None:
    """A mouse drag from `start` to `end` (column, row of the Markdown's first list)."""
    first = markdown.query_one(MarkdownList).region
    x, y = first.x - markdown.region.x, first.y - markdown.region.y
    await pilot.mouse_down(markdown, offset=(x + start[0], y + start[1]))
    await pilot.hover(markdown, offset=(x + end[0], y + end[1]))
    await pilot.mouse_up(markdown, offset=(x + end[0], y + end[1]))
    await pilot.pause()


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
