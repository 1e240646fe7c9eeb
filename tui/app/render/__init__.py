"""The one place that touches Textual's private names: the compositor, layout and Markdown
adaptations that make a streamed reply cheap to paint.

The rest of the app uses only the names below. When the installed Textual is one the render
path is tested with and every private name it uses is there (compat), they are the seam's
own classes; otherwise (or with FIRSTTOKEN_STOCK_RENDER=1) they are Textual's stock classes
and no-op stand-ins (stock), and a one-line warning says so once: a Textual upgrade costs
speed, never what is shown.

- `RenderScreen`: the main screen's base (a compositor that repaints what changed only).
- `ChatPane`: the chat's scrolling base (steady scrollbar, one layout per write).
- `StoreSizeWithoutRelayout`, `LayoutWithoutRepaint`: mixins, first in a widget's bases.
- `reply_markdown_class()`: the reply's Markdown widget class (imported on first use).
- `paint_now`, `keeps_height`, `set_cursor_blink`, `repaint_everything`: helpers.
- `EnterFrameHold`, `warm_up_block_styles`, `shared_parser`: the same in both modes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.app.render import compat
from tui.app.render.enter_frame import EnterFrameHold
from tui.app.render.markdown_parser import shared_parser
from tui.app.render.style_warm_up import warm_up_block_styles

if TYPE_CHECKING:
    from textual.widgets import Markdown

STOCK_REASON = compat.decide(compat.CORE)  # None: the seam's own classes
_notices: list[str] = []
if STOCK_REASON is not None:
    _notices.append(compat.warn_once(STOCK_REASON))

if TYPE_CHECKING or STOCK_REASON is None:
    from tui.app.render.chat_pane import ChatPane
    from tui.app.render.growth_repaint import GrowthAwareScreen as RenderScreen
    from tui.app.render.paint_now import paint_now
    from tui.app.render.prompt_cursor import set_cursor_blink
    from tui.app.render.redraw import repaint_everything
    from tui.app.render.single_layout import LayoutWithoutRepaint, StoreSizeWithoutRelayout
    from tui.app.render.steady_height import keeps_height
else:
    from tui.app.render.stock import (
        ChatPane,
        LayoutWithoutRepaint,
        RenderScreen,
        StoreSizeWithoutRelayout,
        keeps_height,
        paint_now,
        repaint_everything,
        set_cursor_blink,
    )

__all__ = [
    "STOCK_REASON",
    "ChatPane",
    "EnterFrameHold",
    "LayoutWithoutRepaint",
    "RenderScreen",
    "StoreSizeWithoutRelayout",
    "keeps_height",
    "notices",
    "paint_now",
    "repaint_everything",
    "reply_markdown_class",
    "set_cursor_blink",
    "shared_parser",
    "warm_up_block_styles",
]

_reply_class: type[Markdown] | None = None


def reply_markdown_class() -> type[Markdown]:
    """The reply's Markdown widget: the seam's ReplyMarkdown, or Textual's Markdown when the
    render path is stock or Textual's Markdown lacks a name it uses (checked here, on first
    use: importing Textual's Markdown is work the first frame does not need)."""
    global _reply_class
    if _reply_class is None:
        reason = STOCK_REASON or compat.decide(compat.MARKDOWN)
        if reason is None:
            from tui.app.render.reply_blocks import ReplyMarkdown

            _reply_class = ReplyMarkdown
        else:
            if reason != STOCK_REASON:
                _notices.append(compat.warn_once(reason))
            from textual.widgets import Markdown

            _reply_class = Markdown
    return _reply_class


def notices() -> list[str]:
    """What the app should tell the user about the render path (empty: nothing)."""
    return list(_notices)
