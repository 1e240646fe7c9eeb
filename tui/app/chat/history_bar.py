"""The bar above the chat that says the history is not being saved, and why, until it is.

A warning on stderr is hidden behind the alternate screen, and a toast fades: a user would
chat on believing every reply is kept. The bar stays for as long as the app runs (the reason
is updated if another failure follows); chatting goes on as usual."""

from __future__ import annotations

from textual.widgets import Static

HEADLINE = "⚠ history is not being saved"


class HistoryWarning(Static):
    DEFAULT_CSS = """
    HistoryWarning {
        width: 100%;
        height: auto;
        max-height: 4;
        padding: 0 1;
        color: $text-warning;
        background: $warning-muted;
        text-style: bold;
    }
    """

    def __init__(self, reason: str) -> None:
        super().__init__(self.text_for(reason), markup=False, id="history-warning")

    @staticmethod
    def text_for(reason: str) -> str:
        return f"{HEADLINE}: {reason}" if reason else HEADLINE

    def show_reason(self, reason: str) -> None:
        self.update(self.text_for(reason))
