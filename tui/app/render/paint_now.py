"""Paint the screen's pending changes now, not at its next frame tick.

Textual lays out and paints on a 60 Hz timer: a change made just after a tick waits up to
16 ms for the next one. For most changes that is the right trade (several changes, one
frame). Two frames are waited on by the user, and there is nothing to coalesce them with: the
first words of a reply and its last. For those the app runs the tick's work at once.
"""

from __future__ import annotations

from typing import Any


def paint_now(app: Any) -> None:
    """Run the current screen's pending layout and paint now (what its update timer does on
    its next tick; nothing when updates are held or there is nothing to do)."""
    try:
        screen = app.screen
    except Exception:  # no screen (the app is closing): nothing to paint
        return
    if app._batch_count or not screen.is_current:
        return
    if (
        screen._layout_required
        or screen._repaint_required
        or screen._scroll_required
        or screen._dirty_widgets
    ):
        screen._on_timer_update()  # Textual 8's per-tick work (pinned in pyproject)
