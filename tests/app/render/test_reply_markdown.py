"""Reply blocks take their inline styles (em, strong, s, code_inline) from the reply's
Markdown instead of working out their own: they must look exactly like Textual's own."""

from __future__ import annotations

import pytest
from test_final_update import painted
from textual.app import App, ComposeResult
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownList, MarkdownParagraph

from tui.app.chat.message_view import AssistantMessage
from tui.app.render.reply_blocks import INLINE_COMPONENTS
from tui.app.themes import register_themes

TEXT = "Plain *em* **strong** ~~s~~ and `code`.\n\n- item with `code`\n"


class SideBySide(App[None]):
    def compose(self) -> ComposeResult:
        yield Markdown(TEXT, id="stock")
        yield AssistantMessage(0, TEXT)


@pytest.mark.parametrize(
    ("theme", "ansi"),
    [("firsttoken-dark", False), ("firsttoken-light", False), ("firsttoken-dark", True)],
)
async def test_inline_styles_match_textuals_own(theme: str, ansi: bool) -> None:
    app = SideBySide(ansi_color=ansi)
    register_themes(app)
    async with app.run_test() as pilot:
        app.theme = theme
        await pilot.pause()
        stock = app.query_one("#stock", Markdown).query(MarkdownParagraph)
        reply = app.query_one(AssistantMessage).markdown
        # The paragraph, and the list item's paragraph (ours: the list, which draws its item).
        ours = [*reply.query(MarkdownParagraph), *reply.query(MarkdownList)]
        assert len(stock) == len(ours) == 2
        for mine, theirs in zip(ours, stock, strict=True):
            assert not mine._component_styles  # nothing worked out per block
            for name in sorted(INLINE_COMPONENTS):
                assert mine.get_visual_style(name) == theirs.get_visual_style(name), name
        # What they paint (a paragraph may be folded into the reply's settled lines).
        stock_markdown = app.query_one("#stock", Markdown)
        assert painted(app.query_one(AssistantMessage).markdown) == painted(stock_markdown)
