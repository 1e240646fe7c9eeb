"""Textual's stock classes and no-op stand-ins for the seam's public names.

Handed out when the installed Textual is not one the render path is tested with, when
a private name it uses is missing, or with FIRSTTOKEN_STOCK_RENDER=1 (see compat). Nothing
here touches a private name: the app paints as any Textual app does, slower while a reply
streams, the same on screen.
"""

from __future__ import annotations

from typing import Any

from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import TextArea


class RenderScreen(Screen[Any]):
    """Textual's screen, with its own compositor."""


class StoreSizeWithoutRelayout:
    """No-op: Textual lays out again after a widget's size changes."""


class LayoutWithoutRepaint:
    """No-op: Textual repaints a container asked for a layout in full."""


class ChatPane(VerticalScroll):
    """A VerticalScroll with the seam's ChatPane interface, on Textual's public API."""

    def size_changed(self) -> None:
        """A layout stored a new size or virtual size."""

    def watch_virtual_size(self) -> None:
        self.size_changed()

    def following(self) -> bool:
        """The view follows the end of the chat: anchored, and scrolled to the end."""
        return self.is_anchored and self.scroll_y >= self.max_scroll_y


def paint_now(app: Any) -> None:
    """No-op: Textual paints at its next frame tick."""


def keeps_height(block: Any, content: Any) -> bool:
    """Never known here: every update asks for a layout, as Textual's own does."""
    return False


def set_cursor_blink(text_area: TextArea, blinking: bool) -> None:
    """No-op: the cursor keeps blinking (switching it off and on again can leave a stuck
    cursor cell in Textual 8.2, and repairing that needs a private name)."""


def repaint_everything(screen: Screen[Any]) -> None:
    """Render every widget of `screen` again and repaint the whole screen."""
    for widget in screen.walk_children(with_self=True):
        widget.refresh()
