"""One block per chat message: user, assistant (streamed Markdown), system/tool, error.

Every block remembers `message_index`, its position in the chat's message list
(`ChatSession.messages`), so the trim preview can mark exactly the messages trimming would drop
(class `-dropped`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Region
from textual.widgets import Static

from tui.app.chat.reasoning_block import ReasoningBlock
from tui.app.render import StoreSizeWithoutRelayout, reply_markdown_class, shared_parser

if TYPE_CHECKING:
    from textual.widgets import Markdown
    from typing_extensions import Self

DROPPED_MARK = "✂ dropped by trimming"


def message_text(message: dict) -> str:
    """The visible text of an OpenAI-format message (content may be None or a parts list)."""
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    text = str(content) if content else ""
    calls = message.get("tool_calls") or []
    names = [str((call.get("function") or {}).get("name", "?")) for call in calls]
    if names:
        text = (text + "\n" if text else "") + "→ tool call: " + ", ".join(names)
    return text or "(empty)"


def warm_up_markdown() -> None:
    """Import the reply's Markdown and build the parser (called from the warm-up thread)."""
    reply_markdown_class()
    shared_parser().parse("# warm\n\nup *now*\n\n- a\n\n```py\nx = 1\n```\n")
    # Code fences are highlighted with pygments: its lexer lookup imports on first use.
    from rich.syntax import Syntax

    Syntax("x = 1", "python").highlight("x = 1")


class MessageView(Vertical):
    """Base block: a titled border; `-dropped` dims it and names the reason."""

    ROLE_TITLE = "message"
    spare = False  # hidden, kept for the next turn (see ChatLog)
    _repaint_held = False  # see _show_subtitle

    def __init__(self, message_index: int | None, *, classes: str = "") -> None:
        super().__init__(classes=f"message {classes}".strip())
        self.message_index = message_index
        self.border_title = self.ROLE_TITLE
        self._subtitle: Content = Content("")

    def set_dropped(self, dropped: bool) -> None:
        if dropped == self.has_class("-dropped"):
            return
        self.set_class(dropped, "-dropped")
        self.border_subtitle = Content(DROPPED_MARK) if dropped else self._subtitle

    def set_status(self, status: str, *, live: bool = False) -> None:
        """The text on the bottom border (plain, never markup); `live` (a reply on its way)
        shows it in the accent colour."""
        subtitle = Content.styled(status, "$accent") if live else Content(status)
        self._subtitle = subtitle
        if not self.has_class("-dropped"):
            self._show_subtitle(subtitle)

    def _show_subtitle(self, subtitle: Content) -> None:
        # Textual's setter repaints the whole block, and so everything inside it: the whole
        # reply would go to the terminal again with every status change, several a second
        # while it streams. The subtitle is drawn on the bottom border row:
        # repaint that row only.
        self._repaint_held = True
        try:
            self.border_subtitle = subtitle
        finally:
            self._repaint_held = False
        width, height = self.outer_size
        if height:
            left, top = self.content_offset
            self.refresh(Region(-left, height - 1 - top, width, 1))

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Self:
        if self._repaint_held:
            return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)


class PlainMessage(MessageView):
    """User, system and tool messages: plain text (cheap, even for a long loaded history)."""

    def __init__(self, message_index: int | None, role: str, text: str) -> None:
        self.ROLE_TITLE = {"user": "you", "system": "system", "tool": "tool result"}.get(role, role)
        super().__init__(message_index, classes=f"-{role}")
        self._body = Static(text, markup=False, classes="body")

    def compose(self) -> ComposeResult:
        yield self._body

    def set_text(self, text: str) -> None:
        self._body.update(text)


class AssistantMessage(StoreSizeWithoutRelayout, MessageView):
    """An assistant reply; while streaming, ReplyWriter appends to `self.markdown`."""

    ROLE_TITLE = "assistant"
    repaint_growth_only = True  # see growth_repaint: a growing reply repaints its new rows

    def __init__(
        self, message_index: int | None, text: str = "", model: str = "", reasoning: str = ""
    ) -> None:
        super().__init__(message_index, classes="-assistant")
        self.set_model(model)
        # Its class is imported on first use: importing Textual's Markdown is costly, and the
        # first frame needs none.
        markdown_class = reply_markdown_class()
        self.markdown: Markdown = markdown_class(text, classes="body", parser_factory=shared_parser)
        # The model's thinking, above the reply (widgets/reasoning_block.py).
        self.reasoning = ReasoningBlock(reasoning, collapsed=True) if reasoning else None

    def compose(self) -> ComposeResult:
        if self.reasoning is not None:
            yield self.reasoning
        yield self.markdown

    def reasoning_block(self) -> ReasoningBlock | None:
        """The thinking's block, mounted above the reply on first use (None until the
        reply's Markdown is mounted)."""
        if self.reasoning is None:
            if self.markdown.parent is not self:
                return None
            self.reasoning = ReasoningBlock()
            self.mount(self.reasoning, before=self.markdown)
        return self.reasoning

    def set_model(self, model: str) -> None:
        self.border_title = f"assistant · {model}" if model else self.ROLE_TITLE

    @property
    def source(self) -> str:
        return self.markdown.source


class ErrorMessage(MessageView):
    """A failed request: the engine's one-line hint, in the theme's error colour."""

    ROLE_TITLE = "error"

    def __init__(self, kind: str, hint: str) -> None:
        super().__init__(None, classes="-error")
        self.border_title = f"✗ {kind.replace('_', ' ')}" if kind else "✗ error"
        self._hint = hint

    def compose(self) -> ComposeResult:
        yield Static(self._hint, markup=False, classes="body")
