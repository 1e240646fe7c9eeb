"""The reply's final full update: what it shows must equal a fresh render of the whole text
(Textual's own Markdown given the text at once), however the text was streamed; and the
blocks a fresh parse builds the same are kept, not re-mounted (a re-mount sends every block
to the terminal again)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from rich.cells import cell_len
from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.content import Content
from textual.geometry import Size
from textual.strip import Strip
from textual.widgets import Markdown, Static
from textual.widgets._markdown import (
    MarkdownBlock,
    MarkdownBullet,
    MarkdownList,
    MarkdownTableContent,
)

from benchmarks.render.dense_reply import dense_markdown
from tui.app.chat.message_view import AssistantMessage
from tui.app.render.drawn_lists import content_width, drawn_items
from tui.app.render.settled_blocks import SettledLines, rendered_lines
from tui.demo.reply import offline_reply

MIXED = """Setext heading
==============

Intro with *em*, **strong**, ~~gone~~, `code` and a [link][ref].

- one
- two
  - nested *item*
  - nested two
- three

3. third
4. fourth

> quoted
> - with a list

| name | ms |
|------|---:|
| ttft | 42 |
| tpot | 7 |

```python
def f() -> int:
    return 1
```

    indented code

<div>html block</div>

---

Closing paragraph, then the reference.

[ref]: https://example.com/docs
"""

LISTS = """Steps:

8. eight
9. nine *with em*
10. ten, the bullets get wider
11. eleven
    - nested bullet
    - nested two
      1. deep ordered
      2. deep two

- loose item

  with a second paragraph

- item with code:

  ```sh
  firsttoken ask 'hi'
  ```
- tight again
  > quoted in an item
- last
Trailing paragraph.
"""

UNTERMINATED = "Some code:\n\n```sh\nfirsttoken ask 'hi'\nfirsttoken bench"


class SideBySide(App[None]):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield Markdown(self.text, id="stock")
        yield AssistantMessage(0, "")


def _content_key(content: Any) -> Any:
    if not isinstance(content, Content):
        return repr(content)
    return content.plain, tuple((s.start, s.end, repr(s.style)) for s in content.spans)


def shown(markdown: Markdown) -> list[Any]:
    """Everything a Markdown widget shows, node by node, with each node's size (heading ids
    left out: they hold the block's object id). A list item that is one paragraph drawing its
    own bullet shows as the row, bullet, column and paragraph Textual builds for it, and a list
    that draws its items as the rows, bullets, columns and blocks Textual builds for them."""
    rows: list[Any] = []
    for node in markdown.walk_children(with_self=False):
        if isinstance(node, SettledLines):
            continue  # what it paints is compared by `painted`
        if getattr(node, "drawn_items", None) is not None:
            rows.append(node_row(node))
            rows.extend(stock_list_rows(node, node.drawn_items, content_width(node))[0])
            continue
        if getattr(node, "bullet", "") and isinstance(node.parent, MarkdownList):
            rows.extend(stock_item_rows(node))
            continue
        rows.append(node_row(node))
    return rows


def node_row(node: Any, size: Size | None = None) -> list[Any]:
    # (outer_size: the size its layout gave it; a folded block is not on screen itself)
    size = node.outer_size if size is None else size
    row: list[Any] = [type(node).__name__, sorted(node.classes), node.name, size]
    if isinstance(node, MarkdownBullet):
        row.append(node.symbol)
    elif isinstance(node, MarkdownTableContent):
        row.append([_content_key(c) for c in node.headers])
        row.append([[_content_key(c) for c in r] for r in node.rows])
    elif isinstance(node, Static):
        row.append(_content_key(node.visual))
    return row


def stock_item_rows(paragraph: Any) -> list[list[Any]]:
    """What Textual's list shows for an item that is `paragraph` (which draws its bullet):
    a row as wide and tall as the paragraph, the bullet as wide as its symbol, and a column
    holding the paragraph, both as tall as the row."""
    width, height = paragraph.outer_size
    indent = cell_len(paragraph.bullet)
    beside = Size(width - indent, height)
    return [
        ["Horizontal", [], None, paragraph.outer_size],
        ["MarkdownBullet", [], None, Size(indent, height), paragraph.bullet],
        ["Vertical", [], None, beside],
        node_row(paragraph, beside),
    ]


def stock_list_rows(drawn: Any, items: list[Any], width: int) -> tuple[list[Any], int]:
    """What Textual's list shows for the items a list draws itself at `width`, and its height:
    for each item a row, its bullet and a column, as tall as the item's blocks, which are
    one bullet narrower (nested lists too)."""
    rows: list[Any] = []
    height = 0
    for item in items:
        indent = cell_len(item.symbol)
        inner = max(1, width - indent)
        blocks: list[Any] = []
        tall = 0
        for block in item.blocks:
            if isinstance(block, MarkdownList):
                nested, nested_height = stock_list_rows(drawn, drawn_items(block), inner)
                blocks += [node_row(block, Size(inner, nested_height)), *nested]
                tall += nested_height
            else:
                lines = block._content.get_height(drawn.styles, inner)
                blocks.append(node_row(block, Size(inner, lines)))
                tall += lines
        rows += [
            ["Horizontal", [], None, Size(width, tall)],
            ["MarkdownBullet", [], None, Size(indent, tall), item.symbol],
            ["Vertical", [], None, Size(inner, tall)],
            *blocks,
        ]
        height += tall
    return rows, height


def painted(markdown: Markdown) -> list[list[tuple[str, Any]]]:
    """Every line a Markdown widget paints at its size, as (text, style) runs (Textual's own
    compositor, over the widget and everything in it; a style by what it looks like)."""
    return [runs(strip) for strip in rendered_lines(markdown, Compositor())]


def runs(strip: Strip) -> list[tuple[str, str]]:
    """A line as runs of text in one look (adjacent segments that look the same joined)."""
    joined: list[tuple[str, str]] = []
    for segment in strip:
        look = str(segment.style)
        if joined and joined[-1][1] == look:
            joined[-1] = (joined[-1][0] + segment.text, look)
        else:
            joined.append((segment.text, look))
    return joined


def blocks(markdown: Markdown) -> list[MarkdownBlock]:
    """The Markdown's top-level blocks (the reply's Markdown also holds its settled lines)."""
    return list(markdown.query_children(MarkdownBlock))


def chunks(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    out, at = [], 0
    while at < len(text):
        size = rng.randint(1, 24)
        out.append(text[at : at + size])
        at += size
    return out


async def stream(app: SideBySide, pilot: Any, parts: list[str]) -> Markdown:
    """Append `parts` to the reply widget and let the screen settle."""
    markdown = app.query_one(AssistantMessage).markdown
    for part in parts:
        await markdown.append(part)
    await pilot.pause()
    return markdown


async def stream_then_update(app: SideBySide, pilot: Any, parts: list[str]) -> Markdown:
    markdown = await stream(app, pilot, parts)
    await markdown.update(app.text)
    await folded(pilot, markdown)
    return markdown


async def folded(pilot: Any, markdown: Any) -> None:
    """Have the screen arrange the reply until its fold holds still. A full update leaves
    blocks to fold in one more layout, which a callback asks for after the next layout: were
    it still due, the comparison's own compositor would be the first to arrange the reply
    again, and it places the fold without sizing it as the screen does. So: lay out and let
    callbacks run until that changes neither the reply's arrangement generation nor its
    fold."""
    for _ in range(10):
        before = (markdown._generation, markdown._fold.version)
        markdown.refresh(layout=True)
        await pilot.pause()
        await pilot.pause()
        if (markdown._generation, markdown._fold.version) == before:
            return


DEMO = "".join(offline_reply(400, 500))


# Replies dense with blocks (from benchmarks/render/dense_reply): most of their blocks are folded
# into the reply's settled lines while they stream, and their lists draw their items.
CODE_DENSE = dense_markdown("code", 40, 500)
LISTS_DENSE = dense_markdown("lists", 20, 500)
MIXED_DENSE = dense_markdown("mixed", 20, 600)

DOCS = [MIXED, LISTS, UNTERMINATED, DEMO, CODE_DENSE, LISTS_DENSE, MIXED_DENSE]
DOC_IDS = ["mixed", "lists", "open-fence", "demo", "code-dense", "lists-dense", "mixed-dense"]
# The demo reply's opening (heading, list, code, CJK, paragraphs) is enough to compare after
# every write: comparing after every write of all 400 tokens is too slow for the suite.
SHORT_DEMO = "".join(offline_reply(150, 500))


@pytest.mark.parametrize(
    "text",
    [MIXED, LISTS, UNTERMINATED, SHORT_DEMO, dense_markdown("code", 40, 250), LISTS_DENSE[:600]],
    ids=["mixed", "lists", "open-fence", "demo", "code-dense", "lists-dense"],
)
@pytest.mark.parametrize("seed", [1, 2])
async def test_every_write_shows_what_textuals_own_append_shows(text: str, seed: int) -> None:
    # Textual re-mounts the last block when it is a heading or a list; this widget updates it
    # in place. After every write both must show the same.
    app = SideBySide("")
    async with app.run_test() as pilot:
        ours = app.query_one(AssistantMessage).markdown
        stock = app.query_one("#stock", Markdown)
        await pilot.pause()
        for part in chunks(text, seed):
            await ours.append(part)
            await stock.append(part)
            # Until the reply's arrangement holds still: however late a loaded machine runs
            # the layout a write asked for, the comparison is of the settled screen.
            await folded(pilot, ours)
            assert shown(ours) == shown(stock), f"after {ours.source!r}"
            assert painted(ours) == painted(stock), f"after {ours.source!r}"


@pytest.mark.parametrize("text", DOCS, ids=DOC_IDS)
@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_streamed_then_updated_shows_what_a_fresh_render_shows(text: str, seed: int) -> None:
    app = SideBySide(text)
    async with app.run_test() as pilot:
        markdown = await stream_then_update(app, pilot, chunks(text, seed))
        assert markdown.source == text
        assert shown(markdown) == shown(app.query_one("#stock", Markdown))
        assert painted(markdown) == painted(app.query_one("#stock", Markdown))


@pytest.mark.parametrize("text", DOCS, ids=DOC_IDS)
async def test_a_reopened_reply_shows_what_a_fresh_render_shows(text: str) -> None:
    # A saved chat's replies are given their whole text at once when the chat is reopened.
    app = SideBySide(text)
    async with app.run_test() as pilot:
        markdown = app.query_one(AssistantMessage).markdown
        await markdown.update(text)
        await folded(pilot, markdown)
        assert shown(markdown) == shown(app.query_one("#stock", Markdown))
        assert painted(markdown) == painted(app.query_one("#stock", Markdown))


async def test_unchanged_blocks_are_kept_not_remounted() -> None:
    app = SideBySide(DEMO)
    async with app.run_test() as pilot:
        markdown = await stream(app, pilot, chunks(DEMO, 7))
        before = blocks(markdown)
        assert len(before) > 10
        await markdown.update(DEMO)
        await pilot.pause()
        after = blocks(markdown)
        assert len(after) == len(before)
        # Paragraphs and code fences updated in place as they streamed are kept too: every
        # block is the one already shown.
        assert all(a is b for a, b in zip(after, before, strict=True))


async def test_a_block_that_parses_differently_in_full_is_updated() -> None:
    # Streamed, the link's reference is not defined yet when its paragraph is built; the full
    # parse resolves it, so that paragraph takes the new text (in place), and the table, which
    # streaming updates row by row, is rebuilt; the other blocks are kept as they are.
    app = SideBySide(MIXED)
    async with app.run_test() as pilot:
        markdown = await stream(app, pilot, chunks(MIXED, 5))
        before = blocks(markdown)
        intro = before[1]
        assert "[link][ref]" in intro.visual.plain  # unresolved while streaming
        await markdown.update(MIXED)
        await folded(pilot, markdown)
        after = blocks(markdown)
        assert len(after) == len(before)
        assert after[0] is before[0]  # the heading did not change
        assert after[1] is intro and intro.visual.plain.endswith("and a link.")
        assert after[2] is before[2]  # nor the list after the paragraph
        table = 5
        assert type(after[table]).__name__ == "MarkdownTable" and after[table] is not before[table]
        assert shown(markdown) == shown(app.query_one("#stock", Markdown))


async def test_every_block_textual_builds_gets_its_key() -> None:
    # block_keys splits the tokens where Textual's builder does (an HTML block, which builds
    # nothing, goes with the next block), so every block is keyed and can be kept.
    app = SideBySide(MIXED)
    async with app.run_test() as pilot:
        markdown = app.query_one(AssistantMessage).markdown
        await markdown.update(MIXED)  # nothing shown yet: Textual's own update
        await pilot.pause()
        built = blocks(markdown)
        assert len(built) == len(app.query_one("#stock", Markdown).children) == 10
        assert all(block._parse_key is not None for block in built)
