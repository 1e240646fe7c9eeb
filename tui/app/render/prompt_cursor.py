"""Switch a TextArea's cursor blink without leaving a stuck cursor cell."""

from __future__ import annotations

from textual.widgets import TextArea


def set_cursor_blink(text_area: TextArea, blinking: bool) -> None:
    """Switch the cursor's blink (the app turns it off while a reply streams: a blink is a
    frame). Textual 8.2's TextArea caches rendered lines under a key that records the cursor
    only while it blinks, so a line drawn with the steady cursor comes back from the cache
    after the blink is switched on again: a stuck cursor cell that no later refresh
    repairs. The cached lines are dropped whenever the mode changes."""
    if blinking != text_area.cursor_blink:
        text_area.cursor_blink = blinking
        text_area._line_cache.clear()
        text_area.refresh()
