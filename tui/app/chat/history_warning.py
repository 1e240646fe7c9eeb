"""History that cannot be written is said in the chat, persistently (history_bar.py):
a history file that could not be opened at start (corrupt, in a folder that cannot be written),
or a save that failed later (read-only, disk full). The reason is server-free text, but it
names a path: shown inert like everything else."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.app.untrusted import shown

if TYPE_CHECKING:
    from textual.screen import Screen

PREFIX = "history not saved: "


def show_history_problem(screen: Screen[object], problem: str) -> bool:
    """Put the bar above the chat on `screen` (or update its reason). False when the chat is
    gone: the app is closing (Ctrl+Q files the reply under way as it ends), and the caller
    says it once the app has ended instead."""
    from tui.app.chat.history_bar import HistoryWarning

    reason = shown(problem.removeprefix(PREFIX))
    existing = screen.query(HistoryWarning)
    if existing:
        existing.first().show_reason(reason)
        return True
    column = screen.query_one_optional("#chat-column")
    if column is None or not screen.is_attached:
        return False
    column.mount(HistoryWarning(reason), before=0)
    return True
