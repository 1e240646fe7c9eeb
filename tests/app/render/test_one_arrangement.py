"""The reply's Markdown arranges its blocks once per width and content (one_arrangement.py):
the placements it answers with are those Textual would work out at the size asked, for every
kind of block, and a layout pass while the reply grows arranges them once."""

from __future__ import annotations

from typing import Any

from helpers.app_pilot import WidgetsInApp, wait_for
from helpers.virtual_terminal import settled
from textual._arrange import arrange
from textual.geometry import Size
from textual.layouts.vertical import VerticalLayout
from textual.widget import Widget

from tui.app.chat.chat_log import ChatLog
from tui.app.chat.message_view import AssistantMessage
from tui.app.render.reply_blocks import ReplyMarkdown

EVERY_KIND = """\
# Heading one

Some *words* and `code`.

## Heading two

- a list
- with items
  1. nested
  2. ordered

> a quote
> - with a list

```python
print("fenced")
```

| a | b |
|---|---|
| 1 | 2 |

---

### Heading three

10. starts at ten
11. and goes on
"""


def placements(arrangement: Any) -> list[Any]:
    return [(p.widget, p.region, p.offset, p.margin) for p in arrangement.placements]


async def test_the_shared_arrangement_is_textuals_at_every_height() -> None:
    async with WidgetsInApp(ChatLog(id="chat")).run_test(size=(80, 30)) as pilot:
        reply = AssistantMessage(0, model="demo")
        await pilot.app.query_one(ChatLog).mount(reply)
        markdown = reply.markdown
        assert isinstance(markdown, ReplyMarkdown)
        await markdown.update(EVERY_KIND)
        await pilot.pause()
        kinds = {type(block).__name__ for block in markdown.children}
        assert {"MarkdownBulletList", "MarkdownBlockQuote", "MarkdownTable"} <= kinds
        width, height = markdown.size
        assert height > 20
        for asked in (0, 7, height, 3 * height):
            # Textual's arrangement of what the reply lays out (its settled lines, then its
            # live blocks: see settled_blocks).
            shown = markdown.displayed_children
            textuals = arrange(markdown, shown, Size(width, asked), markdown.screen.size)
            assert placements(markdown.arrange(Size(width, asked))) == placements(textuals)


async def test_a_growing_reply_arranges_its_blocks_once_a_layout() -> None:
    arranged: list[Widget] = []
    arrange = VerticalLayout.arrange

    def counted(self: Any, parent: Widget, *args: Any, **kwargs: Any) -> Any:
        arranged.append(parent)
        return arrange(self, parent, *args, **kwargs)

    async with WidgetsInApp(ChatLog(id="chat")).run_test(size=(80, 30)) as pilot:
        reply = AssistantMessage(0, model="demo")
        await pilot.app.query_one(ChatLog).mount(reply)
        await pilot.pause()
        compositor = pilot.app.screen._compositor
        reflow = compositor.reflow
        layouts = 0

        def counted_reflow(*args: Any) -> Any:
            nonlocal layouts
            layouts += 1
            return reflow(*args)

        compositor.reflow = counted_reflow  # type: ignore[method-assign]
        VerticalLayout.arrange = counted  # type: ignore[method-assign]
        try:
            for part in EVERY_KIND.split("\n\n"):
                await reply.markdown.append(part + "\n\n")
                await wait_for(pilot, lambda: settled(pilot.app), what="the write laid out")
        finally:
            VerticalLayout.arrange = arrange  # type: ignore[method-assign]
        assert layouts >= 8
        # Textual arranges it up to three times a layout; the reply's Markdown, once at most.
        assert arranged.count(reply.markdown) <= layouts
