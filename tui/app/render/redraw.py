"""Ctrl+L: every widget rendered afresh, every cell painted again."""

from __future__ import annotations

from textual.screen import Screen

from tui.app.render.steady_scrollbar import SteadyScrollBar


def repaint_everything(screen: Screen[object]) -> None:
    """Render every widget of `screen` again, from its content (no cached line kept), and
    repaint the whole screen. A full repaint goes through Textual's own painting (see
    frame_rows), so what it shows depends on none of the render path's shortcuts."""
    for widget in screen.walk_children(with_self=True):
        widget.refresh()
        bar = getattr(widget, "_vertical_scrollbar", None)  # the screen has none
        if isinstance(bar, SteadyScrollBar):
            bar.forget_rows()
            bar.refresh()
