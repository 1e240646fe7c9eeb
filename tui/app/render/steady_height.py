"""Give a text block new content, and ask for a layout only when its height changes.

Textual's `Static.update` asks for a layout on every change, and a layout arranges the whole
screen. A streamed paragraph takes a write of a few words at a time but gains a line only
every few writes: the writes in between change no size anywhere, only the paragraph's own
rows. Wrapping the new content at the paragraph's width (what the layout would do to measure
it) tells which case a write is; a write that keeps the height repaints the block and nothing
else.
"""

from __future__ import annotations

from typing import Any

from textual.visual import visualize


def keeps_height(block: Any, content: Any) -> bool:
    """Would `block` (mounted and laid out) keep its height showing `content`?"""
    if not block.is_mounted or block._layout_required:
        return False
    width, height = block.content_size
    width -= getattr(block, "bullet_width", 0)  # a list item's paragraph (list_rows)
    if width <= 0:
        return False
    visual = visualize(block, content, markup=block._render_markup)
    return bool(visual.get_height(block.styles, width) == height)


def set_block_content(block: Any, content: Any) -> None:
    """`MarkdownBlock.set_content`, without a layout when the height stays."""
    block._content = content
    block.update(content, layout=not keeps_height(block, content))
