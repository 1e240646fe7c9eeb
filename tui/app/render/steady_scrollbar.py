"""A scrollbar that renders its rows again only when what it draws changes.

Textual repaints a scrollbar, every row of it, whenever its scroll figures change. While a
reply streams, the chat pane's virtual height and scroll position change with every write,
yet the thumb of a pane that follows the bottom of a long chat stays where it is (at the
bottom, one cell tall): those repaints would render the same rows again with every write.

The repaint is still asked for (Textual sets the figures one at a time, and a state in
between can differ), but the rows come from the last render when the bar looks the same.

The thumb is drawn in eighths of a cell (Textual's `ScrollBarRender.render_bar`); two states
with the same eighths, size, colours and hover/grab state draw the same cells.

While a long reply grows, the thumb does move (it shrinks and slides a little with each
write), and a full render of the bar with every write adds up over a long reply. Yet a
vertical bar's rows come in a handful of kinds (track above, track below, thumb, and the two
partial glyph rows at its ends), and rows of the same kind render to the same line. So each
rendered row is kept by its kind, and a bar whose rows are all of kinds seen since the
colours last changed is put together from those rows without rendering.
"""

from __future__ import annotations

from math import ceil
from typing import Any

from textual.geometry import Region
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip

EIGHTHS = len(ScrollBarRender.VERTICAL_BARS)


def thumb_eighths(
    length: int, virtual_size: float, window_size: float, position: float
) -> tuple[int, int] | None:
    """Where `render_bar` puts the thumb, as (start, end) in eighths of a cell; None when it
    draws no thumb. Same arithmetic as Textual 8.2's `ScrollBarRender.render_bar`."""
    if not (window_size and length and virtual_size and length != virtual_size):
        return None
    thumb_size = max(1, window_size / (virtual_size / length))
    offset = (length - thumb_size) * (position / (virtual_size - window_size))
    start = int(offset * EIGHTHS)
    return start, start + ceil(thumb_size * EIGHTHS)


class SteadyScrollBar(ScrollBar):
    _drawn: Any = None  # the appearance of the rows below
    _drawn_lines: list[Strip] | None = None
    _look: Any = None  # the appearance, but where the thumb is, of the rows by kind below
    _line_by_kind: dict[Any, Strip]

    def forget_rows(self) -> None:
        """Render every row afresh next time (Ctrl+L)."""
        self._drawn = self._drawn_lines = self._look = None

    def _row_kinds(self) -> list[Any] | None:
        """One key per row of a vertical bar, equal for rows that render the same while the
        colours, size and hover state stay (None: a bar this does not know how to key).
        `render_bar` with its default colours draws each kind of row differently."""
        if not self.vertical or self.screen.styles.scrollbar_color.a == 0:
            return None
        virtual = self.window_virtual_size
        window = self.window_size if self.window_size < virtual else 0
        bar = self.renderer.render_bar(
            size=self.size.height,
            virtual_size=ceil(virtual),
            window_size=ceil(window),
            position=self.position,
            thickness=self.thickness,
            vertical=True,
        )
        rows = [segment for segment in bar.segments if segment.text != "\n"]
        return rows if len(rows) == self.size.height else None

    def _rows_from_kinds(self, appearance: Any) -> list[Strip] | None:
        """The bar's lines put together from rows rendered before, or None."""
        look = appearance[:-1]  # all but the last item, where the thumb is
        if look != self._look:
            self._look = look
            self._line_by_kind = {}
        kinds = self._row_kinds()
        if kinds is None:
            return None
        lines = self._line_by_kind
        if not all(kind in lines for kind in kinds):
            full = self._render_all()
            if len(full) == len(kinds):
                lines.update(zip(kinds, full, strict=True))
            return full
        return [lines[kind] for kind in kinds]

    def _render_all(self) -> list[Strip]:
        self._styles_cache.clear()
        self._render_content()  # from the figures now, whatever was marked
        return super().render_lines(self.size.region)

    def _appearance(self) -> Any:
        """Everything the rows depend on (what `ScrollBar.render` reads)."""
        parent = self.parent
        if parent is None or not self.is_mounted:
            return None
        styles = parent.styles
        virtual = self.window_virtual_size
        window = self.window_size if self.window_size < virtual else 0
        size = self.size
        return (
            size,
            self.thickness,
            self.vertical,
            self.grabbed is not None,
            self.mouse_over,
            styles.scrollbar_background,
            styles.scrollbar_color,
            styles.scrollbar_background_hover,
            styles.scrollbar_color_hover,
            styles.scrollbar_background_active,
            styles.scrollbar_color_active,
            parent.background_colors[0],
            self.screen.styles.scrollbar_color.a == 0,
            thumb_eighths(
                size.height if self.vertical else size.width,
                ceil(virtual),
                ceil(window),
                self.position,
            ),
        )

    def render_lines(self, crop: Region) -> list[Strip]:
        appearance = self._appearance()
        if appearance is None:
            return super().render_lines(crop)
        if appearance != self._drawn or self._drawn_lines is None:
            self._drawn_lines = self._rows_from_kinds(appearance) or self._render_all()
            self._drawn = appearance
        lines = self._drawn_lines[crop.y : crop.bottom]
        if crop.column_span != (0, self.size.width):
            lines = [line.crop(crop.x, crop.right) for line in lines]
        return lines
