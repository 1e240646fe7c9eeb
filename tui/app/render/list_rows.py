"""A reply's list items, in a list that keeps Textual's rows: one widget for an item that is
one paragraph, where Textual's list shows three around it.

Textual shows each list item as a row (`Horizontal`) holding a bullet (`MarkdownBullet`) and
a column (`Vertical`) with the item's blocks, every one of them mounted, styled, laid out and
painted. A list whose items are paragraphs and lists like it is drawn whole by one widget
(drawn_lists); a list holding more (code, a quote, a heading) keeps Textual's rows, and
here an item of it that is one paragraph is the paragraph alone, drawing its own bullet
(`OwnBullet`): its text wraps one bullet narrower, and its lines start with the cells
Textual's bullet would paint beside them (the symbol on the first line, blanks below, in
the bullet's style), so it paints what Textual's row paints. The list lays these out top to
bottom. An item holding more keeps Textual's row, bullet and column; an item that gains
more while it streams switches to them in place.

Only the reply's Markdown uses these (tests/app/render/test_final_update.py compares what it paints
with Textual's own Markdown after every write).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from textual.containers import Horizontal, Vertical
from textual.geometry import Offset, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget, _RenderCache
from textual.widgets._markdown import (
    MarkdownBullet,
    MarkdownListItem,
    MarkdownOrderedList,
)

from tui.app.render.single_layout import StoreSizeWithoutRelayout

# The bullet's colour, as Textual's MarkdownBullet has it (its DEFAULT_CSS), read by the
# reply's paragraphs as a component style of the reply's Markdown (see InlineStylesFromDocument).
BULLET_COMPONENT = "list-bullet"
BULLET_STYLES_CSS = """
ReplyMarkdown {
    & > .list-bullet {
        color: $text-primary;
    }
    &:light > .list-bullet {
        color: $text-secondary;
    }
}
"""

UpdateBlocks = Callable[[Widget, Sequence[Any], Sequence[Any]], Awaitable[None]]


class OwnBullet:
    """Mixin for the reply's paragraphs (first in the bases). With a `bullet`, the paragraph
    is a whole list item: it paints Textual's bullet beside its text, and its selection
    starts with the bullet's, as Textual's bullet gives it."""

    bullet = ""  # the item's symbol; empty: a paragraph like any other

    @property
    def bullet_width(self) -> int:
        """The cells the bullet takes at the left of each line."""
        return cell_len(self.bullet)

    def show_bullet(self, symbol: str) -> None:
        if symbol == self.bullet:
            return
        wider = cell_len(symbol) != self.bullet_width
        self.bullet = symbol
        widget: Any = self
        if widget.is_mounted:
            widget.refresh(layout=wider)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return super().get_content_height(  # type: ignore[misc]
            container, viewport, max(1, width - self.bullet_width)
        )

    def _render_content(self) -> None:
        """Textual's rendering of a widget's content, with the text one bullet narrower and
        the bullet's cells in front of each line."""
        if not self.bullet:
            super()._render_content()  # type: ignore[misc]
            return
        widget: Any = self
        width, height = widget.size
        indent = self.bullet_width
        text_style = widget.visual_style
        text_width = max(1, width - indent)
        text = Visual.to_strips(widget, widget.visual, text_width, height, text_style)
        # A line below the text, as Textual's render_line pads one.
        below = Strip.blank(text_width, text_style.rich_style)
        bullet = widget.get_visual_style(BULLET_COMPONENT).rich_style
        column = [Strip([Segment(self.bullet, bullet)], indent)]
        column += [Strip.blank(indent, bullet)] * max(0, height - 1)
        lines = [
            Strip.join([column[y], text[y] if y < len(text) else below]) for y in range(height)
        ]
        widget._render_cache = _RenderCache(widget.size, lines)
        widget._dirty_regions.clear()

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        selected = super().get_selection(selection)  # type: ignore[misc]
        # Textual's bullet gives its symbol when a selection reaches it: one that holds the
        # whole item, ends in it, or starts at its first cell.
        if selected is None or not self.bullet or selection.start not in (None, Offset(0, 0)):
            return selected
        text, ending = selected
        return f"{self.bullet} {text}", ending


# A list item's row, as Textual's list `compose()` builds it, from classes of the same names
# that take their new size without asking for another layout pass (see single_layout): each
# write into a list would otherwise cost a second reflow and frame.
ListRow = type("Horizontal", (StoreSizeWithoutRelayout, Horizontal), {})
ListColumn = type("Vertical", (StoreSizeWithoutRelayout, Vertical), {})
ListBullet = type("MarkdownBullet", (StoreSizeWithoutRelayout, MarkdownBullet), {})


def alone(item: Any) -> OwnBullet | None:
    """The item's paragraph, when the item is that paragraph and nothing else."""
    blocks = item._blocks
    if len(blocks) == 1 and isinstance(blocks[0], OwnBullet):
        return blocks[0]
    return None


def item_widget(item: Any, symbol: str) -> Widget:
    """What shows a list item (built, not mounted) in its list: its paragraph with the bullet,
    or Textual's row of the bullet and a column of the item's blocks."""
    paragraph = alone(item)
    if paragraph is not None:
        paragraph.bullet = symbol
        return paragraph  # type: ignore[return-value]
    bullet = ListBullet()
    bullet.symbol = symbol
    return ListRow(bullet, ListColumn(*item._blocks))


class ListRows:
    """Mixin for a Markdown list block (first in the bases): its items from `item_widget`."""

    def compose(self) -> Any:
        blocks = self._blocks  # type: ignore[attr-defined]
        items = [block for block in blocks if isinstance(block, MarkdownListItem)]
        for item, symbol in zip(items, bullet_symbols(self, items), strict=True):
            yield item_widget(item, symbol)
        blocks.clear()


def bullet_symbols(fresh: Any, items: Sequence[Any]) -> list[str]:
    """Each item's bullet as Textual's list `compose()` draws it."""
    if not isinstance(fresh, MarkdownOrderedList) or not items:
        return [item.bullet for item in items]
    suffix = ". "
    start = 1
    if isinstance(fresh._blocks[0], MarkdownListItem):
        with contextlib.suppress(ValueError):
            start = int(fresh._blocks[0].bullet)
    numbers = [f"{number}{suffix}" for number in range(start, start + len(items))]
    width = max(len(number) for number in numbers)
    return [number.rjust(width + 1) for number in numbers]


def show_symbol(shown: Widget, symbol: str) -> None:
    """Give a shown item (a paragraph with its bullet, or a row) the bullet `symbol`."""
    if isinstance(shown, OwnBullet):
        shown.show_bullet(symbol)
        return
    bullet: Any = shown.children[0]
    if bullet.symbol != symbol:
        wider = len(bullet.symbol) != len(symbol)
        bullet.symbol = symbol  # a reactive that repaints; its width is "auto":
        bullet.refresh(layout=wider)


async def update_list(shown: Any, fresh: Any, update_blocks: UpdateBlocks) -> bool:
    """Make a mounted list show `fresh` (same kind, not mounted): unchanged items are kept,
    changed ones updated in place, new ones mounted. False (nothing done): not possible.
    `update_blocks` updates a row's column (the reply's own, which updates lists with this)."""
    items: list[Any] = [block for block in fresh._blocks if isinstance(block, MarkdownListItem)]
    widgets = list(shown.children)
    if not shown.is_mounted or len(items) < len(widgets) or len(widgets) != len(shown._item_keys):
        return False
    symbols = bullet_symbols(fresh, items)
    for index, (item, symbol) in enumerate(zip(items, symbols, strict=True)):
        if index >= len(widgets):
            await shown.mount(item_widget(item, symbol))
            continue
        show_symbol(widgets[index], symbol)
        if shown._item_keys[index] is None or shown._item_keys[index] != item._parse_key:
            await update_item(shown, widgets[index], item, symbol, update_blocks)
    shown._item_keys = [item._parse_key for item in items]
    shown._parse_key = fresh._parse_key
    shown._copy_context(fresh)
    return True


async def update_item(
    shown_list: Widget, shown: Widget, item: Any, symbol: str, update_blocks: UpdateBlocks
) -> None:
    """Make the widget showing a list item show `item` (built, not mounted)."""
    paragraph = alone(item)
    if isinstance(shown, OwnBullet):
        if paragraph is not None and type(paragraph) is type(shown):
            await shown._update_from_block(paragraph)  # type: ignore[attr-defined]  # in place
            shown.source_range = paragraph.source_range  # type: ignore[attr-defined]
            return
        # A paragraph that now has company (a nested list): Textual's row in its place.
        await shown_list.mount(item_widget(item, symbol), before=shown)
        await shown.remove()
        return
    column = shown.children[-1]
    await update_blocks(column, list(column.children), item._blocks)
