"""A scrollbar that renders its rows again only when what it draws changes.

Textual repaints a scrollbar, every row of it, whenever its scroll figures change. While a
reply streams, the chat pane's virtual height and scroll position change with every write,
yet the thumb of a pane that follows the bottom of a long chat stays where it is (at the
bottom, one cell tall): those repaints re-rendered ~30 identical rows a write, up to 0.46 s
of a 4,000-token reply (benchmarks/render/profile_app.py, RENDER_COUNT_LINES).

The repaint is still asked for (Textual sets the figures one at a time, and a state in
between can differ), but the rows come from the last render when the bar looks the same.

The thumb is drawn in eighths of a cell (Textual's `ScrollBarRender.render_bar`); two states
with the same eighths, size, colours and hover/grab state draw the same cells.
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
            self._styles_cache.clear()
            self._render_content()  # from the figures now, whatever was marked
            self._drawn_lines = super().render_lines(self.size.region)
            self._drawn = appearance
        lines = self._drawn_lines[crop.y : crop.bottom]
        if crop.column_span != (0, self.size.width):
            lines = [line.crop(crop.x, crop.right) for line in lines]
        return lines
