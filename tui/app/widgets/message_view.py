"""One block per chat message: user, assistant (streamed Markdown), system/tool, error.

Every block remembers `message_index`, its position in the session's message list, so the
trim preview can mark exactly the messages trimming would drop (class `-dropped`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Region
from textual.widgets import Static

from tui.app.widgets.block_keys import BlockKey, same_blocks, top_level_blocks
from tui.app.widgets.single_layout import (
    LayoutWithoutRepaint,
    StoreSizeWithoutRelayout,
    drop_premount_layout,
)

if TYPE_CHECKING:
    from textual.await_complete import AwaitComplete
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


_PARSER: Any = None


def _parser() -> Any:
    """One shared parser: Markdown.append otherwise builds a new MarkdownIt per write."""
    global _PARSER
    if _PARSER is None:
        from markdown_it import MarkdownIt

        _PARSER = MarkdownIt("gfm-like")
    return _PARSER


def warm_up_markdown() -> None:
    """Import the Markdown widget and build the parser (called from the warm-up thread)."""
    from textual.widgets import Markdown  # noqa: F401

    _parser().parse("# warm\n\nup *now*\n\n- a\n\n```py\nx = 1\n```\n")
    # Code fences are highlighted with pygments: its lexer lookup imports on first use.
    from rich.syntax import Syntax

    Syntax("x = 1", "python").highlight("x = 1")


_REPLY_MARKDOWN: Any = None

# Markdown blocks style inline text through four component classes. Textual works out each
# block's component styles when the block is mounted (a stylesheet pass per class), which was
# 40 % of mounting a reply's blocks (benchmarks/render: the tail of a long reply, the full
# update at its end). The styles are the same for every block of a reply, so the reply's
# Markdown works them out once and its blocks read them from it.
INLINE_COMPONENTS = frozenset({"em", "strong", "s", "code_inline"})
# Textual 8.2's own rules for these classes (Markdown's DEFAULT_CSS, there under MarkdownBlock).
INLINE_STYLES_CSS = """
ReplyMarkdown {
    &:dark > .code_inline {
        background: $warning 10%;
        color: $text-warning 95%;
    }
    &:light > .code_inline {
        background: $error 5%;
        color: $text-error 95%;
    }
    &:ansi > .code_inline {
        background: ansi_default !important;
    }
    & > .em {
        text-style: italic;
    }
    & > .strong {
        text-style: bold;
    }
    & > .s {
        text-style: strike;
    }
}
"""


class InlineStylesFromDocument:
    """Mixin for a Markdown block (first in the bases): no component styles of its own; the
    inline ones come from the Markdown document that holds the block."""

    @classmethod
    def _get_component_classes(cls) -> frozenset[str]:
        return frozenset()

    def get_component_styles(self, *names: str) -> Any:
        return self._markdown.get_component_styles(*names)  # type: ignore[attr-defined]


class KeyedBlock:
    """Mixin for a Markdown block (first in the bases): remembers the tokens it was built
    from (`block_keys`), so the reply's final update can keep it when they are unchanged."""

    _parse_key: BlockKey | None = None
    _updates_in_place = False  # set per block class (see below)

    async def _update_from_block(self, block: Any) -> None:
        # A paragraph or code fence takes the new block's text, token and (code) highlighting,
        # so it now looks exactly as that block would. Other kinds are replaced by the new
        # block (which has its own key) or, for tables, updated row by row: not known to match,
        # so the final update rebuilds them.
        same_kind = self._updates_in_place and type(block) is type(self)
        self._parse_key = getattr(block, "_parse_key", None) if same_kind else None
        await super()._update_from_block(block)  # type: ignore[misc]


def _reply_markdown_class() -> Any:
    """Markdown that grows without a second layout per write (see single_layout), and whose
    final full update re-mounts only the blocks that changed (see block_keys). Built on first
    use: importing Markdown costs ~50 ms that the first frame does not need."""
    global _REPLY_MARKDOWN
    if _REPLY_MARKDOWN is None:
        from textual.await_complete import AwaitComplete
        from textual.widgets import Markdown
        from textual.widgets._markdown import MarkdownBlock, MarkdownFence, MarkdownParagraph

        block_classes: dict[type, type] = {}

        class ReplyMarkdown(LayoutWithoutRepaint, StoreSizeWithoutRelayout, Markdown):
            COMPONENT_CLASSES = INLINE_COMPONENTS
            DEFAULT_CSS = INLINE_STYLES_CSS

            def get_block_class(self, block_name: str) -> Any:
                # Each block kind, same name (so CSS type selectors still match), with the mixins.
                base = super().get_block_class(block_name)
                if base not in block_classes:
                    mixins: tuple[type, ...] = (KeyedBlock, StoreSizeWithoutRelayout)
                    if base._get_component_classes() == INLINE_COMPONENTS:
                        mixins += (InlineStylesFromDocument,)
                    in_place = issubclass(base, (MarkdownParagraph, MarkdownFence))
                    attributes = {"_updates_in_place": in_place}
                    block_classes[base] = type(base.__name__, (*mixins, base), attributes)
                return block_classes[base]

            def _parse_markdown(self, tokens: Any) -> Any:
                tokens = tokens if isinstance(tokens, list) else list(tokens)
                expected = top_level_blocks(tokens)
                consumed = 0

                def counted() -> Any:
                    nonlocal consumed
                    for token in tokens:
                        consumed += 1
                        yield token

                for index, block in enumerate(super()._parse_markdown(counted())):
                    drop_premount_layout(block)
                    # Keyed only when Textual split the tokens where block_keys says it does.
                    if index < len(expected) and expected[index].end == consumed:
                        block._parse_key = expected[index].key
                    yield block

            def update(self, markdown: str) -> AwaitComplete:
                if not self.is_mounted or not self._shown_blocks():
                    return super().update(markdown)  # nothing shown yet: Textual's own path
                return AwaitComplete(self._update_changed_blocks(markdown))

            def _shown_blocks(self) -> list[Any]:
                return [child for child in self.children if isinstance(child, MarkdownBlock)]

            async def _update_changed_blocks(self, markdown: str) -> None:
                """Textual's update(), keeping each block a fresh parse builds the same."""
                parser = _parser() if self._parser_factory is None else self._parser_factory()
                async with self.lock:
                    tokens = parser.parse(markdown)  # ~9 ms for a 4,000-token reply
                    fresh = top_level_blocks(tokens)
                    shown = self._shown_blocks()
                    keep = same_blocks([block._parse_key for block in shown], fresh)
                    self._markdown = markdown
                    self._theme = self.app.theme
                    self._table_of_contents = None
                    lines = markdown.splitlines()
                    self._last_parsed_line = len(lines) - (1 if lines and lines[-1] else 0)
                    with self.app.batch_update():
                        for index, fresh_block in enumerate(fresh):
                            if index < len(keep) and keep[index]:
                                shown[index].source_range = fresh_block.source_range
                                continue
                            tokens_of_block = tokens[fresh_block.start : fresh_block.end]
                            built = list(self._parse_markdown(tokens_of_block))
                            if not built:
                                continue
                            if index < len(shown):
                                await self.mount_all(built, before=shown[index])
                            else:
                                await self.mount_all(built)
                        stale = [b for b, kept in zip(shown, keep, strict=True) if not kept]
                        if stale:  # replaced, or past the fresh parse's end
                            await self.remove_children(stale)
                self.post_message(
                    Markdown.TableOfContentsUpdated(self, self.table_of_contents).set_sender(self)
                )

        _REPLY_MARKDOWN = ReplyMarkdown
    return _REPLY_MARKDOWN


class MessageView(Vertical):
    """Base block: a titled border; `-dropped` dims it and names the reason."""

    ROLE_TITLE = "message"
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
        # reply went to the terminal again with every status change, several a second while
        # it streams (benchmarks/render). The subtitle is drawn on the bottom border row:
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

    def __init__(self, message_index: int | None, text: str = "", model: str = "") -> None:
        super().__init__(message_index, classes="-assistant")
        self.set_model(model)
        # Imported here: markdown-it costs ~50 ms, and the first frame needs no Markdown.
        self.markdown: Markdown = _reply_markdown_class()(
            text, classes="body", parser_factory=_parser
        )

    def compose(self) -> ComposeResult:
        yield self.markdown

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
