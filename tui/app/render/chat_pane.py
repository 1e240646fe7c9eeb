"""The chat pane's scrolling, painted with the reply's writes.

A scrolling pane that grows with every write of a streamed reply: it stores its new size
without a second layout (single_layout), its scrollbar renders its rows again only when
they look different (steady_scrollbar), and that scrollbar is painted in the layout's frame
instead of a frame of its own.
"""

from __future__ import annotations

from typing import Any

from textual.containers import VerticalScroll
from textual.scrollbar import ScrollBar

from tui.app.render.single_layout import LayoutWithoutRepaint, StoreSizeWithoutRelayout
from tui.app.render.steady_scrollbar import SteadyScrollBar


class ChatPane(LayoutWithoutRepaint, StoreSizeWithoutRelayout, VerticalScroll):
    """A VerticalScroll for a growing chat. `size_changed()` runs after each layout that
    changed its size or its content's (a subclass overrides it); `following()` says whether
    the view follows the end of the content."""

    def size_changed(self) -> None:
        """A layout stored a new size or virtual size."""

    def following(self) -> bool:
        """The view follows the end of the chat. (Textual keeps `is_anchored` true while the
        user has scrolled away; the anchor is then only released.)"""
        return self.is_anchored and not self._anchor_released

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """Textual's, as a SteadyScrollBar (it repaints only when it draws something new)."""
        if self._vertical_scrollbar is None:
            bar = SteadyScrollBar(
                vertical=True, name="vertical", thickness=self.scrollbar_size_vertical
            )
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

    def _size_updated(
        self, size: Any, virtual_size: Any, container_size: Any, layout: bool = True
    ) -> bool:
        changed = super()._size_updated(size, virtual_size, container_size, layout)
        if changed:
            self.size_changed()  # the virtual_size watcher does not run (see the mixin)
            self._paint_scrollbar_in_this_frame()
        return changed

    def _paint_scrollbar_in_this_frame(self) -> None:
        """Textual updates the scrollbar's figures during the layout pass (just above) and
        asks for a repaint, which it then paints in a frame of its own, after the layout's:
        a second frame after every write of a long reply. The layout's frame is still to
        come, so mark the bar's area in it instead."""
        bar = self._vertical_scrollbar
        if bar is None or not bar._repaint_required or not bar.display:
            return
        compositor = self.screen._compositor
        if bar in compositor.visible_widgets:
            compositor.update_widgets({bar})
            bar._repaint_required = False
