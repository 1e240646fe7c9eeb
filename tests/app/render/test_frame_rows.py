"""A frame renders only the rows it paints, of only the widgets that show on those rows (see
tui/app/render/frame_rows.py): Textual renders all the rows in the frame's box of every widget
under it, however small the change. Ctrl+L's repaint is the exception: Textual's own painting."""

from __future__ import annotations

from typing import Any

from helpers.app_pilot import WidgetsInApp, wait_for
from helpers.virtual_terminal import VirtualTerminal, settled
from textual._compositor import Compositor
from textual.containers import Horizontal
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Footer, Header, Static

from tui.app.render import repaint_everything

LINES = [f"line {n}: " + "words " * (n % 7) for n in range(30)]


def record_renders(monkeypatch: Any) -> list[tuple[Widget, Region]]:
    """From now on, every widget asked for lines and the rows it was asked for."""
    rendered: list[tuple[Widget, Region]] = []
    render_lines = Widget.render_lines

    def recorded(widget: Widget, crop: Region) -> Any:
        rendered.append((widget, crop))
        return render_lines(widget, crop)

    monkeypatch.setattr(Widget, "render_lines", recorded)
    return rendered


async def test_a_frame_renders_the_rows_it_paints_and_nothing_else(monkeypatch: Any) -> None:
    text = Static("\n".join(LINES), id="text")
    app = WidgetsInApp(Header(), text, Footer())
    async with app.run_test(size=(60, 40)) as pilot:
        terminal = VirtualTerminal(app)
        await wait_for(pilot, lambda: settled(app), what="the first frame")
        rendered = record_renders(monkeypatch)
        text.refresh(Region(0, 5, 20, 2))  # two rows of the text
        await wait_for(pilot, lambda: settled(app), what="the two rows to be painted")
        assert rendered
        assert {type(widget) for widget, _ in rendered} <= {Static, type(app.screen)}
        assert all(crop.height == 2 for _, crop in rendered)
        assert all(crop.width == widget.outer_size.width for widget, crop in rendered)

        # What those frames leave on the terminal is what a full render shows.
        lines = LINES[:]
        lines[6] = "line 6 changed, and longer than it was before"
        text.update("\n".join(lines))
        await wait_for(pilot, lambda: settled(app), what="the new text to be painted")
        assert "line 6 changed" in terminal.text()
        assert terminal.differences() == []


async def test_two_changes_far_apart_render_only_their_own_rows(monkeypatch: Any) -> None:
    # A change in the reply and one in the side panel make one box over both: Textual renders
    # all the rows in it of every widget under that box, though only two rows are painted,
    # and the widgets behind them (hidden there) as well.
    left, right = Static("\n".join(LINES), id="left"), Static("\n".join(LINES), id="right")
    left.styles.width = right.styles.width = "50%"
    app = WidgetsInApp(Horizontal(left, right))
    async with app.run_test(size=(80, 40)) as pilot:
        terminal = VirtualTerminal(app)
        await wait_for(pilot, lambda: settled(app), what="the first frame")
        rendered = record_renders(monkeypatch)
        left.refresh(Region(0, 2, 10, 1))
        right.refresh(Region(0, 25, 10, 1))
        await wait_for(pilot, lambda: settled(app), what="the two rows to be painted")
        rows = {widget: crop for widget, crop in rendered if widget in (left, right)}
        assert rows[left].y == 2 and rows[left].height == 1
        assert rows[right].y == 25 and rows[right].height == 1
        assert all(crop.height == 1 for _, crop in rendered)  # rows 2 and 25, nothing between
        # The container and the screen behind the two texts show nowhere: not rendered.
        assert {widget for widget, _ in rendered} == {left, right}

        lines = LINES[:]
        lines[3], lines[28] = "left or right, row 3 changed", "row 28 changed as well"
        left.update("\n".join(lines))
        right.update("\n".join(lines))
        await wait_for(pilot, lambda: settled(app), what="the new text to be painted")
        assert terminal.differences() == []


async def test_ctrl_l_repaints_with_textuals_own_painting_and_fresh_lines(
    monkeypatch: Any,
) -> None:
    # The redraw is the user's way out of a screen gone wrong: it must owe nothing to the
    # render path's shortcuts (this frame painting, the rows cached while a reply grows).
    text = Static("\n".join(LINES), id="text")
    app = WidgetsInApp(Header(), text, Footer())
    async with app.run_test(size=(60, 40)) as pilot:
        terminal = VirtualTerminal(app)
        await wait_for(pilot, lambda: settled(app), what="the first frame")
        stock_painted: list[Region] = []
        render_chops = Compositor._render_chops

        def recorded(compositor: Any, crop: Region, is_rendered_line: Any) -> Any:
            stock_painted.append(crop)
            return render_chops(compositor, crop, is_rendered_line)

        monkeypatch.setattr(Compositor, "_render_chops", recorded)
        lines_rendered: list[Widget] = []
        render_line = Widget.render_line

        def rendered_afresh(widget: Widget, y: int) -> Any:
            lines_rendered.append(widget)
            return render_line(widget, y)

        monkeypatch.setattr(Widget, "render_line", rendered_afresh)
        app.screen.refresh()  # a full repaint of the app's own: its painting, cached lines
        await wait_for(pilot, lambda: settled(app), what="the full repaint")
        assert stock_painted == [] and text not in lines_rendered
        repaint_everything(app.screen)
        await wait_for(pilot, lambda: settled(app), what="the redraw")
        assert stock_painted == [app.screen.region]
        assert lines_rendered.count(text) == text.size.height  # every line rendered again
        assert terminal.differences() == []
