"""A reply that grows repaints the rows that changed (from its old bottom edge down), not
all of its rows; anything else that changes place or size is repainted whole, as in Textual.
That the terminal still ends up showing exactly the app is checked in a real terminal by
test_app_e2e_tmux (the pane after streamed replies equals a full repaint)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from helpers.app_pilot import WidgetsInApp, wait_for
from helpers.virtual_terminal import VirtualTerminal, settled
from textual.containers import VerticalScroll
from textual.geometry import Region, Size, Spacing
from textual.map_geometry import MapGeometry

from tui.app.chat.message_view import AssistantMessage
from tui.app.render.growth_repaint import growth_region, paints_the_same, same_stacking


def geometry(region: Region, clip: Region | None = None, offset: tuple[int, int] = (0, 0)) -> Any:
    return SimpleNamespace(
        region=region,
        clip=clip or Region(0, 0, 100, 50),
        order=((0, 0, 0),),
        virtual_region=Region(*offset, region.width, region.height),
    )


def bordered(bottom: int) -> Any:
    return SimpleNamespace(styles=SimpleNamespace(gutter=Spacing(1, 1, bottom, 1)))


def test_growing_repaints_from_the_old_bottom_edge_down() -> None:
    rows = growth_region(
        bordered(1), geometry(Region(2, 4, 70, 10)), geometry(Region(2, 4, 70, 12))
    )
    assert rows == Region(2, 4 + 9, 70, 3)  # old bottom border row, and the two new rows


def test_shrinking_repaints_the_rows_it_left() -> None:
    rows = growth_region(
        bordered(0), geometry(Region(0, 0, 70, 12)), geometry(Region(0, 0, 70, 10))
    )
    assert rows == Region(0, 10, 70, 2)


def test_the_clip_still_applies() -> None:
    clip = Region(0, 0, 100, 14)
    rows = growth_region(
        bordered(1), geometry(Region(0, 4, 70, 10), clip), geometry(Region(0, 4, 70, 12), clip)
    )
    assert rows == Region(0, 13, 70, 1)


def test_rows_the_old_clip_hid_are_repainted() -> None:
    # The parent grew with it: its clip grows at the bottom. What the old clip cut off was
    # not on screen, so it is repainted even above the old bottom edge.
    old = geometry(Region(0, 4, 70, 10), clip=Region(0, 0, 100, 8))
    new = geometry(Region(0, 4, 70, 12), clip=Region(0, 0, 100, 16))
    assert growth_region(bordered(1), old, new) == Region(0, 8, 70, 8)


def test_anything_but_a_change_of_height_is_repainted_whole() -> None:
    old = geometry(Region(2, 4, 70, 10))
    assert growth_region(bordered(1), old, geometry(Region(2, 5, 70, 10))) is None  # moved
    assert growth_region(bordered(1), old, geometry(Region(2, 4, 60, 10))) is None  # narrower
    clipped = geometry(Region(2, 4, 70, 12), clip=Region(0, 2, 100, 40))  # cut at the top
    assert growth_region(bordered(1), old, clipped) is None
    scrolled = geometry(Region(2, 4, 70, 12), offset=(0, 3))
    assert growth_region(bordered(1), old, scrolled) is None


def record_marked_regions(app: Any) -> list[set[Region]]:
    """From now on, the regions each layout pass marks for repainting."""
    compositor = app.screen._compositor
    marked: list[set[Region]] = []
    reflow = compositor.reflow

    def recording_reflow(parent: Any, size: Any) -> Any:
        result = reflow(parent, size)
        marked.append(set(compositor._dirty_regions))
        return result

    compositor.reflow = recording_reflow
    return marked


async def test_a_growing_reply_leaves_its_unchanged_rows_alone() -> None:
    app = WidgetsInApp(AssistantMessage(0, "## Title\n\nA first paragraph.\n", model="demo"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = app.query_one(AssistantMessage)
        before = view.region
        marked = record_marked_regions(app)
        await view.markdown.append("\n\nA second paragraph makes the reply taller.\n")
        await pilot.pause()
        after = view.region
        assert after.height > before.height and marked
        title_row = Region(before.x, before.y, before.width, 2)  # top border and heading
        assert not any(region.overlaps(title_row) for regions in marked for region in regions)
        new_rows = Region(after.x, before.bottom - 1, after.width, after.bottom - before.bottom + 1)
        assert any(region.contains_region(new_rows) for regions in marked for region in regions)


async def test_a_layout_that_mounts_a_block_arranges_the_screen_once() -> None:
    # Textual leaves its full map marked stale after a layout for new widgets, so the geometry
    # lookups later in the same pass would arrange the whole screen again.
    app = WidgetsInApp(AssistantMessage(0, "## Title\n\nA first paragraph.\n", model="demo"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = app.query_one(AssistantMessage)
        compositor = app.screen._compositor
        arranges: list[bool] = []
        reflows = 0
        arrange_root, reflow = compositor._arrange_root, compositor.reflow

        def counted_arrange(root: Any, size: Any, visible_only: bool = True) -> Any:
            arranges.append(visible_only)
            return arrange_root(root, size, visible_only=visible_only)

        def counted_reflow(parent: Any, size: Any) -> Any:
            nonlocal reflows
            reflows += 1
            return reflow(parent, size)

        compositor._arrange_root = counted_arrange  # type: ignore[method-assign]
        compositor.reflow = counted_reflow  # type: ignore[method-assign]
        for part in ("\n\nA new paragraph: a new block.", "\n\n- and a list\n- of two"):
            await view.markdown.append(part)
            await pilot.pause()
        assert reflows >= 2
        assert arranges.count(False) == reflows  # one whole-screen arrangement per layout


async def test_a_new_block_leaves_the_blocks_above_it_alone() -> None:
    # Appending a block changes every earlier block's clip (the reply's inside grew) and its
    # painting order (each new sibling shifts the order of those before it); neither changes
    # what they look like, and Textual repaints all of them on every such write.
    app = WidgetsInApp(VerticalScroll(AssistantMessage(0, "", model="demo")))
    async with app.run_test(size=(80, 30)) as pilot:
        terminal = VirtualTerminal(app)
        view = app.query_one(AssistantMessage)
        await wait_for(pilot, lambda: view.markdown is not None, what="the reply's Markdown")
        await view.markdown.append("## Title\n\nA first paragraph.\n\n- one\n- two")  # streamed
        await wait_for(pilot, lambda: settled(app), what="the reply to be painted")
        blocks = list(view.markdown.children)
        above = Region.from_union([block.region for block in blocks])
        marked = record_marked_regions(app)
        await view.markdown.append("\n\nA new paragraph, a new block.\n")
        await wait_for(pilot, lambda: settled(app), what="the new block to be painted")
        assert len(view.markdown.children) == len(blocks) + 1 and marked
        assert not any(region.overlaps(above) for regions in marked for region in regions)
        assert "A new paragraph" in terminal.text()
        assert terminal.differences() == []


def map_geometry(region: Region, clip: Region, order: int) -> MapGeometry:
    size = Size(region.width, region.height)
    return MapGeometry(region, ((0, 0, order),), clip, size, size, region, Spacing())


def test_a_clip_or_order_change_that_shows_the_same_needs_no_repaint() -> None:
    block = Region(2, 3, 60, 4)
    old = map_geometry(block, clip=Region(0, 0, 80, 10), order=-1)
    assert paints_the_same(old, map_geometry(block, clip=Region(0, 0, 80, 12), order=-2))
    # The clip now cuts the block: what shows changed.
    assert not paints_the_same(old, map_geometry(block, clip=Region(0, 0, 80, 5), order=-1))
    moved = Region(2, 4, 60, 4)
    assert not paints_the_same(old, map_geometry(moved, clip=Region(0, 0, 80, 10), order=-1))


def test_order_changes_count_only_while_the_stacking_is_kept() -> None:
    a, b, c = object(), object(), object()
    clip = Region(0, 0, 80, 24)
    old = {
        a: map_geometry(Region(0, 0, 9, 9), clip, -1),
        b: map_geometry(Region(0, 0, 9, 9), clip, 0),
    }
    shifted = {
        a: map_geometry(Region(0, 0, 9, 9), clip, -2),
        b: map_geometry(Region(0, 0, 9, 9), clip, -1),
        c: map_geometry(Region(0, 9, 9, 1), clip, 0),
    }
    assert same_stacking(old, shifted)  # all shifted down one, a new one on top
    swapped = {a: old[b], b: old[a]}
    assert not same_stacking(old, swapped)  # b now under a: the overlap looks different
