"""A streamed reply's settled blocks, painted from lines rendered once.

Every layout pass arranges every widget on screen, and a streamed write needs one: with the
blocks of a long reply all laid out, each write cost more than the one before, and a reply
dense with code blocks and lists (every list and list item a widget) paid the most
(benchmarks/bench_settled_blocks.py). Yet `Markdown.append` only ever changes the reply's
last block: every block before it is settled.

So a settled block is rendered once, at its laid-out size, into the lines of one widget
(`SettledLines`) that stands in the reply's arrangement for every settled block before the
live tail; the blocks stay mounted (the final update compares them, queries find them) but
are no longer arranged, placed or painted. A block is folded one layout after it settled, so
its size and content are the ones the screen showed. A block that scrolls sideways (a code
fence wider than the reply) is folded too, at its first column, and goes live again, placed
over its own rows of the fold, when the pointer comes to it, so it still scrolls (and drags,
and is selected as itself) from then on; folded, it costs no layout on each write. The
fold renders its lines through Textual's styles cache (link hover, opacity), and keeps
selection and links working: its lines carry their own offsets for selection, and a link's
click action runs on it as it would on the block.

The fold starts over (every block laid out live again, then folded again) when the reply's
width or the theme changes, and is cut back to the first block a full `update()` changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual._compositor import Compositor
from textual.geometry import NULL_OFFSET, NULL_SPACING, Region, Size, Spacing
from textual.layout import DockArrangeResult, WidgetPlacement
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Markdown

from tui.app.render.frame_rows import FrameRowsCompositor
from tui.app.render.single_layout import StoreSizeWithoutRelayout


@dataclass(frozen=True, slots=True)
class FoldedBlock:
    block: Widget
    start: int  # first line of the fold this block owns, with the gap above it
    top: int  # the block's own first line
    height: int
    margin: Spacing
    scrolls: bool  # it scrolls sideways (a code block wider than the reply)
    on_top: bool = False  # live again, placed over its own rows (see go_live)


def rendered_lines(widget: Widget, compositor: Compositor | None = None) -> list[Strip]:
    """The lines `widget` and everything inside it paint at its laid-out size: a compositor
    of its own arranges the subtree (the arrangements are cached) and renders it, as a frame
    does (frame_rows): only the widgets that show, so a list's rows and columns, which lie
    behind its bullets and paragraphs, are not rendered. (Tests pass Textual's own
    `Compositor`, which renders every widget.)

    Rendering asks for each widget's place on the screen, and in the middle of a layout pass
    the screen's map of places is marked out of date: the first question would arrange the
    whole screen again, and the reply's Markdown with it (re-entering the fold). The map
    from the last layout still holds every widget folded here, at the size it is rendered at
    (the fold takes only blocks whose size did not change), so it answers meanwhile."""
    screen_map = widget.screen._compositor
    out_of_date = screen_map._full_map_invalidated
    screen_map._full_map_invalidated = False
    try:
        compositor = FrameRowsCompositor() if compositor is None else compositor
        compositor.reflow(widget, widget.outer_size)
        return compositor.render_strips()
    finally:
        screen_map._full_map_invalidated = out_of_date


def scrolls_sideways(widget: Widget) -> bool:
    return any(
        node.is_scrollable and node.max_scroll_x > 0
        for node in widget.walk_children(Widget, with_self=True)
    )


class SettledLines(StoreSizeWithoutRelayout, Widget):
    """The lines of a reply's settled blocks (see the module)."""

    DEFAULT_CSS = "SettledLines { width: 1fr; height: auto; }"
    repaint_growth_only = True  # grows at the bottom as blocks settle (growth_repaint)

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[Strip | None] = []  # None: a gap between blocks (margins)
        self.texts: list[str] = []  # each line's text, for selection
        self.folded: list[FoldedBlock] = []
        self.width = 0
        self.version = 0  # changes with what the fold holds (the arrangement's cache key)
        self.theme = ""  # the app's theme the lines were rendered with
        # Blocks folded since the last layout placed this widget (growth_repaint reads them).
        self.taken_over: list[Widget] = []

    # -- what it holds ------------------------------------------------------------------------

    def fold(self, block: Widget) -> None:
        lines = rendered_lines(block)
        margin = block.styles.margin
        gap = max(self.folded[-1].margin.bottom, margin.top) if self.folded else 0
        start = len(self.lines)
        self.lines.extend([None] * gap)
        self.lines.extend(lines)
        self.texts.extend([""] * gap)
        self.texts.extend(strip.text.rstrip() for strip in lines)
        entry = FoldedBlock(block, start, start + gap, len(lines), margin, scrolls_sideways(block))
        self.folded.append(entry)
        self.taken_over.append(block)
        self.version += 1

    def cut(self, index: int) -> None:
        """Hold only the first `index` folded blocks."""
        if index >= len(self.folded):
            return
        start = self.folded[index].start
        del self.folded[index:], self.lines[start:], self.texts[start:]
        self.taken_over.clear()
        self.version += 1
        self.refresh()  # rows kept below the cut are not the fold's any more

    def go_live(self, y: int) -> None:
        """Put the block folded at line `y`, if it scrolls sideways, back on screen over its
        rows, where it scrolls as itself: the pointer came to it. Until then it is folded like
        any other block, so a reply's wide code blocks cost no layout on each write."""
        for index, entry in enumerate(self.folded):
            if entry.top <= y < entry.top + entry.height:
                if entry.scrolls and not entry.on_top:
                    self.folded[index] = replace(entry, on_top=True)
                    # Selected as itself, not as the fold's copy of its rows.
                    self.texts[entry.top : entry.top + entry.height] = [""] * entry.height
                    self.version += 1
                    if self.parent is not None:
                        self.parent.refresh(layout=True)
                return

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.go_live(event.y)

    def live_on_top(self, fold_region: Region) -> list[WidgetPlacement]:
        x, y, width = fold_region.x, fold_region.y, fold_region.width
        return [
            WidgetPlacement(
                Region(x, y + entry.top, width, entry.height),
                NULL_OFFSET,
                NULL_SPACING,
                entry.block,
            )
            for entry in self.folded
            if entry.on_top
        ]

    # -- layout -------------------------------------------------------------------------------

    def _get_box_model(
        self,
        container: Size,
        viewport: Size,
        width_fraction: Fraction,
        height_fraction: Fraction,
        constrain_width: bool = False,
        greedy: bool = True,
    ) -> Any:
        from textual.box_model import BoxModel

        # Margins as the first and last folded blocks have them, so that the layout collapses
        # them with the live blocks' as it did before they were folded.
        top = self.folded[0].margin.top if self.folded else 0
        bottom = self.folded[-1].margin.bottom if self.folded else 0
        return BoxModel(
            Fraction(container.width), Fraction(len(self.lines)), Spacing(top, 0, bottom, 0)
        )

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines)

    # -- painting, selection, links -----------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        line = self.lines[y] if 0 <= y < len(self.lines) else None
        if line is None:
            return Strip.blank(self.size.width, self.visual_style.rich_style.background_style)
        line = with_offsets(line, y)
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(y)) is not None:
            style = self.screen.get_component_rich_style("screen--selection")
            line = highlighted(line, span, style)
        return line

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(self.texts)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    async def action_link(self, href: str) -> None:
        """A link in a folded block was clicked: what the block itself would post."""
        markdown = self.parent
        if isinstance(markdown, Markdown):
            self.post_message(Markdown.LinkClicked(markdown, href))


def with_offsets(line: Strip, y: int) -> Strip:
    """`line` with the selection offsets of this widget (column, line) in place of the
    block's, on the segments that had them (text, not padding: as Textual's own, so that
    segments that look the same still join)."""
    segments: list[Segment] = []
    x = 0
    for text, style, control in line:
        if style is not None and "offset" in style.meta:
            style = style + Style.from_meta({"offset": (x, y)})
        segments.append(Segment(text, style, control))
        x += len(text)
    return Strip(segments, line.cell_length)


def highlighted(line: Strip, span: tuple[int, int], style: Any) -> Strip:
    """`line` with its characters from span[0] to span[1] (-1: the end) in `style`."""
    text = line.text
    start, end = span
    end = len(text) if end == -1 else min(end, len(text))
    if start >= end:
        return line
    cuts = [cell_len(text[:start]), cell_len(text[:end]), line.cell_length]
    before, middle, after = line.divide(cuts)
    middle = Strip(
        [Segment(part, (own + style) if own else style) for part, own, _ in middle],
        middle.cell_length,
    )
    return Strip.join([before, middle, after])


def arrange_settled(
    markdown: Any, fold: SettledLines, blocks: Sequence[Widget], size: Size, optimal: bool
) -> DockArrangeResult:
    """The Markdown's arrangement with its settled blocks folded (see the module); folds
    the blocks that settled before the last arrangement."""
    theme = markdown.app.theme
    if fold.folded and (fold.width != size.width or fold.theme != theme):
        fold.cut(0)
        markdown._refold_wanted = True  # no write may follow to fold them again
    fold.width, fold.theme = size.width, theme
    for index, entry in enumerate(fold.folded):
        if index >= len(blocks) - 1 or blocks[index] is not entry.block:
            fold.cut(index)  # a block the final update replaced, or the last block
            break
    # Folded now: the blocks the last arrangement placed that were settled then (only the
    # last block changes while a reply streams) and have the size it gave them.
    placed_before = markdown._settled_placed if markdown._settled_width == size.width else {}
    for block in blocks[len(fold.folded) : -1]:
        laid_out = placed_before.get(block) == block.outer_size
        if not laid_out or block.opacity != 1:
            break
        fold.fold(block)
    placements = arranged(markdown, fold, blocks, size, optimal)
    last = blocks[-1] if blocks else None
    markdown._settled_width = size.width
    markdown._settled_placed = {
        p.widget: p.region.size for p in placements if p.widget is not fold and p.widget is not last
    }
    return DockArrangeResult(placements, {p.widget for p in placements}, NULL_SPACING)


def arrange_blocks(
    markdown: Any, blocks: Sequence[Widget], size: Size, optimal: bool
) -> DockArrangeResult:
    """Every block laid out, none folded (what Textual's own arrangement gives)."""
    live = [block for block in blocks if block.display]
    placements = list(
        markdown.process_layout(markdown.layout.arrange(markdown, live, size, not optimal))
    )
    return DockArrangeResult(placements, set(live), NULL_SPACING)


def arranged(
    markdown: Any, fold: SettledLines, blocks: Sequence[Widget], size: Size, optimal: bool
) -> list[WidgetPlacement]:
    live = [block for block in blocks[len(fold.folded) :] if block.display]
    children = [fold, *live] if fold.folded else live
    placements = list(
        markdown.process_layout(markdown.layout.arrange(markdown, children, size, not optimal))
    )
    if fold.folded:
        placements.extend(fold.live_on_top(placements[0].region))
    return placements
