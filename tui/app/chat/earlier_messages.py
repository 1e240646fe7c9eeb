"""The row above the oldest block shown in a long chat: how many earlier messages are not
laid out, and a click (or scrolling to the top) shows more. See ChatLog."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import Static


class EarlierMessages(Static):
    DEFAULT_CSS = """
    EarlierMessages {
        width: 100%;
        content-align: center middle;
        color: $text-muted;
        margin: 0 0 1 0;
    }
    EarlierMessages:hover {
        color: $text;
        background: $boost;
    }
    """

    class Wanted(Message):
        """The user asked to see more of the earlier messages."""

    def show_count(self, hidden: int, step: int) -> None:
        noun = "message" if hidden == 1 else "messages"
        more = min(hidden, step)
        self.update(
            Text.assemble(
                (f"▲ {hidden:,} earlier {noun}", "bold"),
                f" · scroll to the top or click to show {more:,} more",
            )
        )

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Wanted())
