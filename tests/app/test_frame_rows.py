"""A frame renders only the rows it paints, of only the widgets on those rows (see
GrowthAwareCompositor._get_renders): Textual rendered every top-level widget whole on every
frame, however small the change."""

from __future__ import annotations

from typing import Any

from app_helpers import WidgetsInApp, wait_for
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Footer, Header, Static
from virtual_terminal import VirtualTerminal, settled

LINES = [f"line {n}: " + "words " * (n % 7) for n in range(30)]


async def test_a_frame_renders_the_rows_it_paints_and_nothing_else(monkeypatch: Any) -> None:
    text = Static("\n".join(LINES), id="text")
    app = WidgetsInApp(Header(), text, Footer())
    async with app.run_test(size=(60, 40)) as pilot:
        terminal = VirtualTerminal(app)
        await wait_for(pilot, lambda: settled(app), what="the first frame")
        rendered: list[tuple[Widget, Region]] = []
        render_lines = Widget.render_lines

        def recorded(widget: Widget, crop: Region) -> Any:
            rendered.append((widget, crop))
            return render_lines(widget, crop)

        monkeypatch.setattr(Widget, "render_lines", recorded)
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
