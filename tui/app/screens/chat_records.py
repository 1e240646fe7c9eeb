"""The chat screen's ways into the kept records: the statistics screen, and the open chat
exported to a file in the folder the app was started from."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.app.untrusted import shown_line

if TYPE_CHECKING:
    from textual.app import App

    from tui.session.history import ChatHistory

Notify = Callable[..., Any]  # Textual's notify(message, severity=...)


def open_statistics(
    app: App[Any], history: ChatHistory, model: str, host: str, simulated: bool
) -> None:
    """This chat's model at its endpoint (`host`, or the demo's one group) beside the rest."""
    from tui.app.screens.stats_screen import StatsScreen
    from tui.engine.metrics.statistics import DEMO_HOST, group_stats

    rows = history.latency_rows()
    if rows is None:
        return  # not kept, or not readable: said already
    current = (model, DEMO_HOST if simulated else host)
    app.push_screen(StatsScreen(group_stats(rows), current, shown_line(model)))


def export_chat(
    notify: Notify, history: ChatHistory, chat_id: int | None, as_json: bool, folder: Path
) -> Path | None:
    """The open chat as a file (Markdown, or the JSON `--messages` reads), named by its id and
    title, in `folder`; where it went, or None after saying why not."""
    from tui.session.export import JSON, MARKDOWN

    if chat_id is None:
        notify("nothing to export yet: a chat is saved when its first message is sent")
        return None
    form = JSON if as_json else MARKDOWN
    exported = history.export(chat_id, form)
    if exported is None:
        return None  # the history's warning says why
    text, name = exported
    target = folder / name
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as problem:
        notify(f"could not write {target}: {problem.strerror or problem}", severity="error")
        return None
    notify(f"chat {chat_id} exported to {shown_line(target)}")
    return target
