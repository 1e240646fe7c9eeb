"""Ctrl+L: every widget rendered afresh, every cell painted again."""

from __future__ import annotations

from textual.screen import Screen

from tui.app.render.frame_rows import FrameRowsCompositor
from tui.app.render.steady_scrollbar import SteadyScrollBar


def repaint_everything(screen: Screen[object]) -> None:
    """Render every widget of `screen` again, from its content (no cached line kept), and
    repaint the whole screen through Textual's own painting (see frame_rows): what it shows
    then depends on none of the render path's shortcuts."""
    compositor = screen._compositor
    if isinstance(compositor, FrameRowsCompositor):
        compositor.stock_paint_next = True
    for widget in screen.walk_children(with_self=True):
        widget.refresh()
        bar = getattr(widget, "_vertical_scrollbar", None)  # the screen has none
        if isinstance(bar, SteadyScrollBar):
            bar.forget_rows()
            bar.refresh()
