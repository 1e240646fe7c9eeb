"""A reply's list drawn whole by the list's own widget, when its items hold only paragraphs
and lists like it.

A list is most of what a list-dense reply mounts: Textual shows every item as a row, a
bullet and a column around the item's paragraph, each one mounted, styled, laid out,
painted and folded, and a 40-token write into such a reply often brings a whole new list.
Yet a list whose items are paragraphs (and nested lists of the same kind) paints nothing
but each paragraph's wrapped text beside its bullet, stacked: the items' paragraphs wrap
one bullet narrower, the bullet's symbol stands beside an item's first line and blank
cells in the bullet's style below it, and nothing separates items or nested lists (Textual's
rules give them no margin inside a list). So such a list is one widget here: it keeps the
items Textual's parse built as data, never mounts them, and renders their lines itself,
each item's lines kept until the item changes. Selection and links work as on the reply's
folded lines (settled_blocks): each line carries its own offsets, and a link's click runs
on the list as it would on the item's paragraph.

A list with anything else in an item (code, a quote, a heading) keeps Textual's row, bullet
and column (list_rows). A drawn list that gains such an item while it streams is replaced by
such a list, and such a list whose items can all be drawn again by a drawn list.
tests/app/render/test_final_update.py compares what a drawn list paints, and the widgets Textual
would have built for it, with Textual's own Markdown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.geometry import Offset, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style as TextualStyle
from textual.visual import Visual
from textual.widget import _RenderCache
from textual.widgets._markdown import MarkdownList, MarkdownListItem, MarkdownParagraph

from tui.app.render.list_rows import BULLET_COMPONENT, ListRows, UpdateBlocks, bullet_symbols
from tui.app.render.list_rows import update_list as update_list_rows


def items_of(list_block: Any) -> list[Any]:
    return [block for block in list_block._blocks if isinstance(block, MarkdownListItem)]


def drawable(list_block: Any) -> bool:
    """Whether a built (not mounted) list holds items of paragraphs and drawable lists only."""
    items = items_of(list_block)
    if not items or len(items) != len(list_block._blocks):
        return False
    return all(
        all(
            isinstance(block, MarkdownParagraph)
            or (isinstance(block, MarkdownList) and drawable(block))
            for block in item._blocks
        )
        for item in items
    )


@dataclass(slots=True)
class Drawn:
    """Rows of a drawn list (or of an item), with the text a selection reads from them: one
    line per line of each item's selection as Textual's widgets give it (the bullet, a space,
    the paragraph's text), which the rows' offsets point into."""

    rows: list[Strip]
    texts: list[str]
    bullets: dict[int, int] = field(default_factory=dict)  # text line: its bullet's length

    def extend(self, more: Drawn) -> None:
        """Add what `more` draws below (its text lines numbered after these already)."""
        self.rows.extend(more.rows)
        self.texts.extend(more.texts)
        self.bullets.update(more.bullets)


@dataclass(slots=True)
class DrawnItem:
    """One item of a drawn list: its bullet, the blocks Textual's parse built for it, and
    what it draws, with the width, looks and first text line it was drawn for."""

    symbol: str
    blocks: list[Any]
    rendered: tuple[Any, Drawn] | None = field(default=None)


def drawn_items(list_block: Any) -> list[DrawnItem]:
    items = items_of(list_block)
    symbols = bullet_symbols(list_block, items)
    return [
        DrawnItem(symbol, list(item._blocks)) for item, symbol in zip(items, symbols, strict=True)
    ]


class DrawnList(ListRows):
    """Mixin for a Markdown list block (first in the bases): a drawable list (see the module)
    composes no widgets and paints its items' lines itself; any other list is ListRows'."""

    _drawn: list[DrawnItem] | None = None

    @property
    def box_from_content(self) -> bool:
        """A drawn list's height comes from its lines alone (see block_height)."""
        return self._drawn is not None

    @property
    def drawn_items(self) -> list[DrawnItem] | None:
        """The items this list draws itself (None: its items are widgets)."""
        return self._drawn

    def compose(self) -> Any:
        widget: Any = self
        if drawable(widget):
            self._drawn = drawn_items(widget)
            widget._blocks.clear()
            return
        yield from super().compose()

    def show_items(self, fresh: Any) -> None:
        """Draw `fresh`'s items (a drawable list, built, not mounted); unchanged items keep
        their lines. Asks for a layout only when the list's height changes."""
        assert self._drawn is not None
        widget: Any = self
        old_keys = widget._item_keys
        old = self._drawn
        items = drawn_items(fresh)
        for index, item in enumerate(items):
            if index < len(old) and index < len(old_keys) and old[index].symbol == item.symbol:
                key = old_keys[index]
                if key is not None and key == fresh._item_keys[index]:
                    items[index] = old[index]
        if len(items) == len(old) and all(new is was for new, was in zip(items, old, strict=True)):
            return  # nothing new to draw
        width = content_width(widget)
        height = len(self.drawn_lines(width))
        self._drawn = items
        widget.refresh(layout=height != len(self.drawn_lines(width)))

    # -- lines ---------------------------------------------------------------------------------

    def _looks(self) -> tuple[Any, Any]:
        widget: Any = self
        return widget.visual_style, widget.get_visual_style(BULLET_COMPONENT)

    def drawn(self, width: int) -> Drawn:
        """Everything the list draws at `width` (its content width); unchanged items keep
        what they drew."""
        assert self._drawn is not None
        text_style, bullet_style = self._looks()
        whole = Drawn([], [])
        for item in self._drawn:
            key = (width, text_style, bullet_style, len(whole.texts))
            if item.rendered is None or item.rendered[0] != key:
                drawn = self._draw_item(item, width, len(whole.texts), text_style, bullet_style)
                item.rendered = (key, drawn)
            whole.extend(item.rendered[1])
        return whole

    def drawn_lines(self, width: int) -> list[Strip]:
        return self.drawn(width).rows

    def _draw_item(
        self, item: DrawnItem, width: int, first: int, text_style: Any, bullet_style: Any
    ) -> Drawn:
        """An item's rows beside its bullet, its text lines numbered from `first`."""
        indent = cell_len(item.symbol)
        text_width = max(1, width - indent)
        body = Drawn([], [])
        for block in item.blocks:
            if isinstance(block, MarkdownList):
                for nested in drawn_items(block):
                    at = first + len(body.texts)
                    body.extend(self._draw_item(nested, text_width, at, text_style, bullet_style))
                continue
            at = first + len(body.texts)
            content = block._content
            # Textual's bullet gives its symbol and a space before the item's first paragraph.
            prefix = f"{item.symbol} " if not body.texts else ""
            if prefix:
                body.bullets[at] = len(prefix)
            lines = content.plain.split("\n")
            body.texts.extend([prefix + lines[0], *lines[1:]])
            strips = self._paragraph_lines(block, text_width, text_style)
            body.rows.extend(shifted(strip, len(prefix), at) for strip in strips)
        if not body.rows:
            return body  # an empty item: Textual's row is as tall as its empty column
        bullet = bullet_style.rich_style + Style.from_meta({"offset": (0, first)})
        column = [Strip([Segment(item.symbol, bullet)], indent)]
        column += [Strip.blank(indent, bullet_style.rich_style)] * max(0, len(body.rows) - 1)
        rows = [Strip.join([beside, row]) for beside, row in zip(column, body.rows, strict=True)]
        return Drawn(rows, body.texts, body.bullets)

    def _paragraph_lines(self, paragraph: Any, width: int, text_style: Any) -> list[Strip]:
        """A paragraph's rows as the paragraph renders them at `width` (Textual's
        `_render_content`); a row's end is padded as the paragraph's own is, by the styles
        cache."""
        strips = Visual.to_strips(
            self,  # type: ignore[arg-type]
            paragraph._content,
            width,
            None,
            text_style,
            apply_selection=False,
        )
        return strips or [Strip.blank(width, text_style.rich_style)]

    # -- layout and painting -------------------------------------------------------------------

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self._drawn is None:
            return super().get_content_height(container, viewport, width)  # type: ignore[misc]
        return len(self.drawn_lines(width))

    def _render_content(self) -> None:
        if self._drawn is None:
            super()._render_content()  # type: ignore[misc]
            return
        widget: Any = self
        width, height = widget.size
        text_style, _ = self._looks()
        lines = self.drawn_lines(width)
        below = Strip.blank(width, text_style.rich_style)
        selection = widget.text_selection
        selected = TextualStyle.from_styles(widget.screen.get_component_styles("screen--selection"))
        shown: list[Strip] = []
        for y in range(height):
            line = lines[y] if y < len(lines) else below
            if selection is not None:
                line = selected_in(line, selection, selected)
            shown.append(line)
        widget._render_cache = _RenderCache(widget.size, shown)
        widget._dirty_regions.clear()

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        if self._drawn is None:
            return super().get_selection(selection)  # type: ignore[misc]
        drawn = self.drawn(content_width(self))
        return whole_bullets(selection, drawn.bullets).extract("\n".join(drawn.texts)), "\n"


async def update_list(shown: Any, fresh: Any, update_blocks: UpdateBlocks) -> bool:
    """Make a mounted list show `fresh` (same kind, not mounted): a drawn list draws a
    drawable one; otherwise list_rows updates its item widgets. False: not possible (the list
    is replaced)."""
    if not isinstance(shown, DrawnList) or shown.drawn_items is None:
        if drawable(fresh):
            return False  # items that can be drawn again: a drawn list in its place
        return await update_list_rows(shown, fresh, update_blocks)
    if not shown.is_mounted or not drawable(fresh):  # type: ignore[attr-defined]
        return False
    shown.show_items(fresh)
    list_block: Any = shown
    list_block._item_keys = list(fresh._item_keys)
    list_block._parse_key = fresh._parse_key
    list_block._copy_context(fresh)
    return True


def shifted(strip: Strip, columns: int, first: int) -> Strip:
    """A paragraph's row with its selection offsets (column, line of its text) moved to the
    list's text: its first line `columns` to the right (after the bullet), its lines from
    `first` on."""
    segments: list[Segment] = []
    for text, style, control in strip:
        if style is not None and "offset" in style.meta:
            x, y = style.meta["offset"]
            moved = (x + columns if y == 0 else x, y + first)
            style = style + Style.from_meta({"offset": moved})
        segments.append(Segment(text, style, control))
    return Strip(segments, strip.cell_length)


def content_width(widget: Any) -> int:
    """The width a widget's layout gave its content (known even where it is not on screen)."""
    return int(widget.outer_size.width - widget.styles.gutter.width)


def whole_bullets(selection: Selection, bullets: dict[int, int]) -> Selection:
    """`selection` with a bullet it starts or ends in taken whole, as Textual's bullet widget
    gives its symbol to any selection that reaches it."""
    start, end = selection.start, selection.end
    if start is not None and start.x < bullets.get(start.y, 0):
        start = Offset(0, start.y)
    if end is not None and end.x < bullets.get(end.y, 0):
        end = Offset(bullets[end.y], end.y)
    return Selection(start, end)


def selected_in(row: Strip, selection: Selection, style: TextualStyle) -> Strip:
    """`row` with the characters `selection` holds in the selection's `style`, laid over them
    as Textual lays it over a paragraph's text: a row's segments carry the line and column of
    the list's text they start at (offsets), which a selection is made of."""
    segments: list[Segment] = []
    for text, own, control in row:
        offset = own.meta.get("offset") if own is not None else None
        span = selection.get_span(offset[1]) if offset is not None else None
        if offset is None or span is None:
            segments.append(Segment(text, own, control))
            continue
        first = offset[0]
        start = max(0, span[0] - first)
        end = len(text) if span[1] == -1 else max(0, min(len(text), span[1] - first))
        if start >= end:
            segments.append(Segment(text, own, control))
            continue
        marked = laid_over(own, style)
        plain = own or Style()
        for at, stop, look in ((0, start, plain), (start, end, marked), (end, len(text), plain)):
            if at < stop:  # each piece says where it starts, as a segment of its own would
                moved = look + Style.from_meta({"offset": (first + at, offset[1])})
                segments.append(Segment(text[at:stop], moved, control))
    return Strip(segments, row.cell_length)


def laid_over(own: Style | None, style: TextualStyle) -> Style:
    """A segment's style with the selection's colours blended over its own."""
    own = own or Style()
    background = Color.from_rich_color(own.bgcolor) + style.background
    layered = Style(bgcolor=background.rich_color)
    if style.foreground is not None and style.foreground.a > 0:
        foreground = Color.from_rich_color(own.color) + style.foreground
        layered += Style(color=foreground.rich_color)
    return own + layered
