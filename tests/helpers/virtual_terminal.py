"""A terminal screen in memory for headless app tests: what the app's frames would leave on a
real terminal, cell by cell, to compare with a full repaint of the app as it is now.

The app paints incrementally (only what changed, see tui/app/render); a repaint it skipped by
mistake leaves stale cells that only a terminal shows. The tmux test checks that at the end of
a run of the app; this checks after every step of a headless one.

The full repaint is Textual's alone: a fresh stock `Compositor` arranges the screen, and every
widget renders its lines afresh from its content through its nearest Textual class (no line
the render path cached, no rendering of its own), so the reference shares none of the
shortcuts it checks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.cells import cell_len
from rich.segment import ControlType, Segment
from rich.style import Style
from textual import messages
from textual._compositor import Compositor
from textual._styles_cache import StylesCache
from textual.app import App
from textual.strip import Strip
from textual.widget import Widget

Cell = tuple[str, Style | None]


class VirtualTerminal:
    def __init__(self, app: App[Any]) -> None:
        self.app = app
        width, height = app.size
        self.rows: list[list[Cell]] = [[(" ", None)] * width for _ in range(height)]
        self.frames = 0
        self.painted: list[set[int]] = []  # the columns each frame wrote to
        self.painted_cells: list[set[tuple[int, int]]] = []  # and the cells, as (x, y)
        # What `note()` said as each frame was painted (a test's own figure), when set.
        self.note: Callable[[], Any] | None = None
        self.notes: list[Any] = []
        display = app._display

        def display_and_keep(screen: Any, update: Any) -> None:
            display(screen, update)  # headless: writes nothing
            if update is not None and not app._batch_count and screen is app.screen:
                self.frames += 1
                self.painted.append(set())
                self.painted_cells.append(set())
                self.notes.append(None if self.note is None else self.note())
                self.apply(update, self.rows, self.painted[-1], self.painted_cells[-1])

        app._display = display_and_keep  # type: ignore[method-assign]
        # Whatever the app painted before (its first full frame may come before the test
        # attaches this) is taken as painted right.
        self.rows = self.repainted()

    def apply(
        self,
        update: Any,
        rows: list[list[Cell]],
        columns: set[int] | None = None,
        cells: set[tuple[int, int]] | None = None,
    ) -> None:
        """Write a compositor update's segments into `rows`, as a terminal would (and the
        columns written to into `columns`, the cells into `cells`)."""
        x = y = 0
        for segment in update.__rich_console__(self.app.console, self.app.console.options):
            if segment.control:
                for control in segment.control:
                    if control[0] == ControlType.CURSOR_MOVE_TO:
                        x, y = control[1], control[2]
                continue
            if segment.text == "\n":
                continue
            start, x = x, self._write(rows, x, y, segment)
            if columns is not None:
                columns.update(range(start, x))
            if cells is not None:
                cells.update((column, y) for column in range(start, x))

    @staticmethod
    def _write(rows: list[list[Cell]], x: int, y: int, segment: Segment) -> int:
        row = rows[y]
        style = segment.style
        if style is not None and style.meta:
            # Meta (the offsets a widget gives its text for selection, click actions) never
            # reaches a terminal; what a cell shows is its character, colours and link.
            style = style.clear_meta_and_links().update_link(style.link)
        for character in segment.text:
            width = cell_len(character)
            if 0 <= x < len(row):
                row[x] = (character, style)
            for extra in range(1, width):  # the right half of a wide character
                if 0 <= x + extra < len(row):
                    row[x + extra] = ("", style)
            x += width
        return x

    def repainted(self) -> list[list[Cell]]:
        """The screen as Textual's stock compositor would paint it afresh now. Nothing of the
        app's state changes: each widget's caches are put back after."""
        screen = self.app.screen
        compositor = Compositor()
        compositor.reflow(screen, screen.size)
        widgets: list[Widget] = list(compositor.visible_widgets)
        kept = [
            (widget._styles_cache, widget._render_cache, set(widget._dirty_regions))
            for widget in widgets
        ]
        try:
            for widget in widgets:
                widget._styles_cache = StylesCache()
                widget._render_content()  # its content's lines, from its content now
                widget.render_lines = stock_render_lines(widget)  # type: ignore[method-assign]
            full = compositor.render_full_update()
        finally:
            for widget, (styles_cache, render_cache, dirty) in zip(widgets, kept, strict=True):
                widget._styles_cache, widget._render_cache = styles_cache, render_cache
                widget._dirty_regions.clear()
                widget._dirty_regions.update(dirty)
                del widget.render_lines
        width, height = self.app.size
        rows: list[list[Cell]] = [[(" ", None)] * width for _ in range(height)]
        self.apply(full, rows)
        return rows

    def text(self) -> str:
        """What the terminal shows, row by row."""
        return "\n".join(_text(row) for row in self.rows)

    def differences(self) -> list[str]:
        """Rows where the terminal differs from a full repaint, as text (empty: none)."""
        shown, truth = self.rows, self.repainted()
        return [
            f"row {y}: shown {_text(shown[y])!r} / repaint {_text(truth[y])!r}"
            for y in range(len(truth))
            if shown[y] != truth[y]
        ]


def stock_render_lines(widget: Widget) -> Callable[[Any], list[Strip]]:
    """`widget.render_lines` as its nearest Textual class has it."""
    stock = next(cls for cls in type(widget).__mro__ if cls.__module__.startswith("textual."))
    return lambda crop: stock.render_lines(widget, crop)


def _text(row: list[Cell]) -> str:
    return "".join(character for character, _ in row)


# What a widget posts to its screen to be laid out or repainted (Widget._check_refresh).
PAINT_MESSAGES = (messages.Update, messages.Layout, messages.UpdateScroll)


def settled(app: Any) -> bool:
    """Nothing left to paint: the frames so far are all the terminal will get."""
    screen = app.screen
    return not (
        # Updates held (a write or an update between removing blocks and mounting others):
        # the frame that shows the change is still to come.
        app._batch_count
        or screen._layout_required
        or screen._repaint_required
        or screen._scroll_required
        or screen._dirty_widgets
        or screen._compositor._dirty_regions
        or any(
            widget._repaint_required or widget._scroll_required
            for widget in app.screen.walk_children()
        )
        # A widget clears its own flag when it posts the message; until the screen has taken
        # it, the change is on neither side (a check would then see a paragraph's old words
        # on a loaded machine).
        or any(isinstance(message, PAINT_MESSAGES) for message in screen._message_queue.values)
    )
