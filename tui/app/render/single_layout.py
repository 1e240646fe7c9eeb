"""One screen layout per streamed write instead of two.

When a layout pass finds that a widget grew, Textual 8 stores the new virtual size through a
reactive declared with `layout=True`, which asks for another full screen layout; that second
pass re-measures everything and finds nothing new. On a growing reply that is the Markdown,
its message block and the chat pane, after every write: a second reflow and frame for each
write. The pass that measured the size has already placed everything, so these widgets store
it without asking again (scrollbars are still updated by Textual in the same call). See
docs/performance.md#the-render-path.
"""

from __future__ import annotations

from typing import Any


class StoreSizeWithoutRelayout:
    """Mixin for a Widget subclass (first in the bases)."""

    def _size_updated(
        self, size: Any, virtual_size: Any, container_size: Any, layout: bool = True
    ) -> bool:
        resized = self._size != size  # type: ignore[attr-defined]
        kept = lines_kept_on_growth(self, size) if resized else {}
        # Relies on Widget._size_updated's `layout` flag (Textual 8, pinned in pyproject).
        updated = super()._size_updated(  # type: ignore[misc]
            size, virtual_size, container_size, layout=False
        )
        if kept:
            restore_lines(self, kept)
        if resized:
            # Textual also marks the whole widget for a repaint here. The layout pass that
            # resized it repaints its old and new regions in this frame anyway (any change of
            # geometry is), so the mark only waits for the widget's next refresh: for a
            # growing reply, the next status change, which would send the whole reply to the
            # terminal again.
            self._repaint_regions.clear()  # type: ignore[attr-defined]
        return updated


def lines_kept_on_growth(widget: Any, size: Any) -> dict[int, Any]:
    """The rendered lines (Textual's styles cache) of a widget that says it only grows or
    shrinks at the bottom (`repaint_growth_only`, see growth_repaint) that stay right at its
    new `size`: same width, rows above its old bottom edge (border and padding). Textual drops
    every line on any resize, so each write would re-render the whole visible height of the
    reply's block and of its Markdown."""
    old = widget._size
    if not getattr(widget, "repaint_growth_only", False) or old.width != size.width:
        return {}
    cache = widget._styles_cache
    keep_below = min(old.height, size.height) - widget.styles.gutter.bottom
    dirty = cache._dirty_lines
    return {y: strip for y, strip in cache._cache.items() if y < keep_below and y not in dirty}


def restore_lines(widget: Any, kept: dict[int, Any]) -> None:
    cache = widget._styles_cache
    cache._cache.update(kept)
    cache._dirty_lines.difference_update(kept)


class LayoutWithoutRepaint:
    """Mixin for a container with no content of its own (first in the bases): a layout request
    does not also repaint its whole region. Textual repaints a widget asked for a layout in
    full, and every mount asks its parent for one, so each streamed write that mounts a
    Markdown block would re-send the whole reply to the terminal, and preparing the next
    turn's hidden blocks the whole chat. The layout pass still repaints whatever moved,
    appeared or went away."""

    def refresh(
        self, *regions: Any, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Any:
        if layout and not regions and not recompose:
            repaint = False
        return super().refresh(  # type: ignore[misc]
            *regions, repaint=repaint, layout=layout, recompose=recompose
        )


def drop_premount_refresh(block: Any) -> None:
    """A Markdown block gets its text before it is mounted, which leaves a layout request
    and a repaint request that the block posts on its first idle, after the mount's own
    layout: drop them. The mount lays the block out anyway, and that layout paints it (a
    widget new on screen is painted whole); the repaint request would only cost a second
    frame after each write that mounts a block. Nested blocks (list items) too."""
    if not block.is_mounted:
        block._layout_required = False
        block._repaint_required = False
    for child in getattr(block, "_blocks", ()):
        drop_premount_refresh(child)
