"""A frame renders only the rows it paints, of only the widgets that show on them.

Textual paints a frame from the box around its dirty regions: every widget whose clip meets
the box renders all of its rows in it, front to back, and the first piece rendered for each
place on the screen wins. Most of that is thrown away: the screen, the columns and the chat
pane lie behind the reply on every row it changes, and a change in the side panel together
with one in the reply makes a box over both. Rendering a widget's rows has a fixed cost
however few they are (its background is worked out through all its ancestors), and a frame
would pay it for a dozen widgets.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import pairwise
from typing import Any

from textual._compositor import Compositor
from textual.geometry import Region


class FrameRowsCompositor(Compositor):
    # The dirty regions of the partial frame being painted (None outside one).
    _frame_regions: list[Region] | None = None
    # The next full repaint is Textual's own painting (Ctrl+L, see redraw).
    stock_paint_next = False
    _stock_painting = False

    def render_full_update(self, simplify: bool = False) -> Any:
        self._stock_painting, self.stock_paint_next = self.stock_paint_next, False
        try:
            return super().render_full_update(simplify)
        finally:
            self._stock_painting = False

    def render_partial_update(self) -> Any:
        # Textual clears the dirty regions before it renders; the rows come from them.
        self._frame_regions = list(self._dirty_regions)
        try:
            return super().render_partial_update()
        finally:
            self._frame_regions = None

    def _rows_to_render(self, crop: Region) -> Iterator[tuple[Any, Region, Region]]:
        """(widget, its region, rows of it) for each run of adjacent rows that the frame's
        dirty regions cover where they meet the widget's visible part, front to back.

        Textual takes every widget whose clip (its parent's visible area: the whole screen
        for anything at the top level) meets the box around the dirty regions, with all of
        its rows in the box; a streamed write that changes three rows of the reply goes
        through rows of the header, footer, prompt, panel and chat pane as well. A row of a
        widget left out here is on no span the frame paints where that widget shows.
        Columns are left whole: a widget's strip must start at its own left edge or at a cut,
        so that the frame's cuts divide it as Textual expects."""
        regions = self._frame_regions or [crop]
        for widget, (region, clip) in self.visible_widgets.items():
            visible = region.intersection(clip)
            top, bottom = max(visible.y, crop.y), min(visible.bottom, crop.bottom)
            spans = [
                (max(dirty.y, top), min(dirty.bottom, bottom))
                for dirty in regions
                if dirty.overlaps(visible) and dirty.y < bottom and dirty.bottom > top
            ]
            for first, last in merged(spans):
                yield widget, region, Region(visible.x, first, visible.width, last - first)

    def _render_chops(
        self, crop: Region, is_rendered_line: Callable[[int], bool]
    ) -> Sequence[Mapping[int, Any]]:
        """Textual's `_render_chops` (Textual 8.2, which draws from `_get_renders(crop)`),
        from `_rows_to_render`, and rendering a widget's rows only when some of them show:
        where every piece of them that the frame paints is taken by a widget in front (which
        came first), they are not rendered at all. Full repaints (`crop` the screen, no dirty
        regions kept) go through here too, with every row of every visible widget, except
        the one Ctrl+L asks for: that one is Textual's own."""
        if self._stock_painting:
            return super()._render_chops(crop, is_rendered_line)
        cuts = self.cuts
        chops: list[dict[int, Any]] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
        wanted = painted_columns(self._frame_regions or [crop])
        for widget, region, rows in self._rows_to_render(crop):
            first_cut, last_cut = rows.column_span
            lines = [y for y in rows.line_range if is_rendered_line(y)]
            if not any(
                chops[y].get(cut) is None and any(x1 < end and cut < x2 for x1, x2 in wanted[y])
                for y in lines
                for cut, end in pairwise(cuts[y])
                if first_cut <= cut < last_cut
            ):
                continue  # nothing of these rows shows in this frame
            strips = widget.render_lines(rows.translate(-region.offset))
            for y, strip in zip(rows.line_range, strips, strict=False):
                if not is_rendered_line(y):
                    continue
                chops_line = chops[y]
                final_cuts = [cut for cut in cuts[y] if last_cut >= cut >= first_cut]
                pieces = strip.divide([cut - rows.x for cut in final_cuts[1:]])
                # Painting front to back: the first piece for a cut wins.
                for cut, piece in zip(final_cuts, pieces, strict=False):
                    if chops_line.get(cut) is None:
                        chops_line[cut] = piece
        return chops


def painted_columns(regions: list[Region]) -> dict[int, list[tuple[int, int]]]:
    """For each row, the column ranges (start, end) the frame paints on it."""
    columns: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for region in regions:
        for y in region.line_range:
            columns[y].append((region.x, region.right))
    return columns


def merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Row spans (first, end) joined where they overlap or touch, in order."""
    runs: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        if runs and first <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], last))
        else:
            runs.append((first, last))
    return runs
