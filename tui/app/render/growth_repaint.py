"""When a reply grows, repaint the rows that changed, not the whole reply.

Textual's layout pass repaints, in full, every widget whose place or size changed. A reply
grows by a line or two with most writes, so its block (border and all) and its Markdown would
be repainted whole: every row of the reply would go to the terminal again with each write,
though only the new rows and the moved bottom border look any different.

A container that only lays its children out top to bottom and draws nothing inside but its
background and side borders looks the same in its old rows when it grows or shrinks at the
bottom: what changes is the rows from its old bottom edge (border and padding) to its new
one. Its children are repainted by their own changes. Widgets that say so
(`repaint_growth_only = True`) get that smaller repaint; everything else keeps Textual's.

And when a frame paints those few rows, only the widgets that show on them render, and only
those rows (frame_rows).
"""

from __future__ import annotations

from typing import Any

from textual.geometry import Region
from textual.screen import Screen

from tui.app.render.frame_rows import FrameRowsCompositor


def growth_region(widget: Any, old: Any, new: Any) -> Region | None:
    """The rows that changed when `widget` went from geometry `old` to `new`, or None when
    the change is not a pure change of height at the bottom (then all of it is repainted).
    The clip (the parent's visible area) may grow or shrink at the bottom with it."""
    was, now = old.region, new.region
    if (
        was.x != now.x
        or was.y != now.y
        or was.width != now.width
        or old.order != new.order
        or old.virtual_region.offset != new.virtual_region.offset
        or (old.clip.x, old.clip.y, old.clip.width) != (new.clip.x, new.clip.y, new.clip.width)
    ):
        return None
    bottom_edge = widget.styles.gutter.bottom  # border and padding below the children
    # Rows above `top` were on screen before and look the same; a row the old clip hid was not.
    top = min(now.y + max(0, min(was.height, now.height) - bottom_edge), old.clip.bottom)
    bottom = now.y + max(was.height, now.height)
    visible = old.clip.union(new.clip)
    return Region(now.x, top, now.width, bottom - top).intersection(visible)


def paints_the_same(old: Any, new: Any) -> bool:
    """Whether a widget whose geometry went from `old` to `new` looks the same on screen: the
    same place and size, and the same part of it let through by its clip. The clip itself and
    the painting order may differ (the caller checks that the order of the widgets relative
    to each other is kept). A container's children are clipped to its inside, so a reply
    growing by a row changed the clip of every block above the new row; and each new block
    shifts the order of all the blocks before it. Textual repaints each of them whole on
    every write, though none of them looks any different."""
    return (
        old._replace(clip=new.clip, order=new.order) == new
        and old.visible_region == new.visible_region
    )


def same_stacking(old_map: Any, new_map: Any) -> bool:
    """Whether the widgets in both maps are stacked in the same order in both: then a
    widget's order can change without its pixels changing (new widgets are repainted anyway,
    with what they cover, and so are the places removed ones left)."""
    common = [widget for widget in new_map if widget in old_map]
    return sorted(common, key=lambda widget: old_map[widget].order) == sorted(
        common, key=lambda widget: new_map[widget].order
    )


class GrowthAwareCompositor(FrameRowsCompositor):
    def reflow(self, parent: Any, size: Any) -> Any:
        old_map = dict(self._full_map)
        whole_screen_dirty = size.region in self._dirty_regions
        dirty_before = set(self._dirty_regions)
        result = super().reflow(parent, size)
        # The map just built covers every widget: it is what `full_map` would build again.
        # Textual leaves it marked stale when the layout was for newly mounted widgets, so the
        # next widget geometry lookup (a dozen in the same layout pass) would arrange the
        # whole screen a second time: on every write that mounts a block or a list row.
        self._full_map_invalidated = False
        if whole_screen_dirty:
            return result
        new_map = self._full_map
        # Textual marks clip & region of every changed geometry, old and new; mark the same,
        # except for growing containers that asked for less.
        regions: set[Region] = set()
        changed = {widget for widget, _ in new_map.items() ^ old_map.items()}
        changed -= taken_over_in_place(changed, old_map, new_map)
        stacking_kept = same_stacking(old_map, new_map)
        for widget in changed:
            old, new = old_map.get(widget), new_map.get(widget)
            if old is not None and new is not None and stacking_kept and paints_the_same(old, new):
                continue
            if (
                old is not None
                and new is not None
                and getattr(widget, "repaint_growth_only", False)
            ):
                rows = growth_region(widget, old, new)
                if rows is not None:
                    if rows:
                        regions.add(rows)
                    continue
            for geometry in (old, new):
                if geometry is not None and (area := geometry.clip.intersection(geometry.region)):
                    regions.add(area)
        self._dirty_regions.clear()
        self._dirty_regions.update(dirty_before | regions)
        return result


def taken_over_in_place(changed: set[Any], old_map: Any, new_map: Any) -> set[Any]:
    """Widgets that look the same as before though their geometry changed: a reply's settled
    lines (settled_blocks) that took over blocks, painted line for line as those blocks were,
    and the blocks they took over (gone from the map). Without this, each block would go to
    the terminal once more as it settles. Only when the lines cover exactly their old place
    and the blocks' old places (nothing scrolled or moved); anything else is repainted."""
    same: set[Any] = set()
    for lines in [widget for widget in changed if getattr(widget, "taken_over", None)]:
        blocks, lines.taken_over = lines.taken_over, []
        new, old = new_map.get(lines), old_map.get(lines)
        areas = [old_map[block].region for block in blocks if block in old_map]
        if new is None or len(areas) != len(blocks) or any(block in new_map for block in blocks):
            continue
        if old is not None:
            if old.clip != new.clip or old.virtual_region.offset != new.virtual_region.offset:
                continue
            areas.append(old.region)
        if areas and Region.from_union(areas) == new.region:
            same.add(lines)
            same.update(blocks)
    return same


class GrowthAwareScreen(Screen[Any]):
    """The app's main screen, with the compositor above."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._compositor = GrowthAwareCompositor()
