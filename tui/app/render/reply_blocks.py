"""The reply's Markdown widget: Textual's `Markdown`, streamed into with `append()` and given
one full `update()` at the end, without the work Textual repeats on every write.

Imported on first use (importing Textual's Markdown is costly, and the first frame does not
need it): `message_view` and the warm-up thread import it.

What Textual repeats, and what this does instead (docs/performance.md#the-render-path):

- **The last block is rebuilt on every write.** `append()` parses the last block again and
  hands the result to the shown block's `_update_from_block`, which Textual does in place for
  a paragraph or code fence but by removing and re-mounting the block for everything else: a
  reply streaming into a list would re-mount the whole list (every item: bullet, containers,
  paragraph) on every write, and each re-mount asks for a second layout. Here
  headings and lists are updated in place too: a list keeps the items that did not change and
  updates the one being written (its paragraph takes the new text in place).
- **The final update re-mounts every block.** Each block is keyed by the tokens it was built
  from (`block_keys`); the final update parses the whole reply, keeps every block whose key is
  unchanged and rebuilds only the others (a link whose reference came later, a table).
- **Inline styles are worked out per block.** The reply's blocks read their four inline
  component styles from the reply's Markdown, which works them out once.
- **A list item is three widgets around its paragraph** (a row, its bullet, a column), each
  mounted, styled, laid out and painted. A list whose items are paragraphs (and nested lists
  like it) is one widget that draws them (`drawn_lists`); in any other list, an item that is
  one paragraph is that paragraph alone, drawing its own bullet (`list_rows`).

What is shown is always what Textual itself would show: tests/app/render/test_final_update.py
streams Markdown in random chunks into this widget and into Textual's own, and compares what
they paint after every write and after the final update.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from textual.await_complete import AwaitComplete
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets._markdown import (
    MarkdownBlock,
    MarkdownBlockQuote,
    MarkdownFence,
    MarkdownHeader,
    MarkdownHorizontalRule,
    MarkdownList,
    MarkdownListItem,
    MarkdownParagraph,
)

from tui.app.render.block_height import BoxIgnoresContainerHeight
from tui.app.render.block_keys import BlockKey, span_ends, token_key, top_level_blocks
from tui.app.render.drawn_lists import DrawnList, update_list
from tui.app.render.fence_code import FenceCode
from tui.app.render.list_rows import BULLET_COMPONENT, BULLET_STYLES_CSS, OwnBullet
from tui.app.render.markdown_parser import shared_parser
from tui.app.render.one_arrangement import arranged_size
from tui.app.render.settled_blocks import SettledLines, arrange_blocks, arrange_settled
from tui.app.render.single_layout import (
    LayoutWithoutRepaint,
    StoreSizeWithoutRelayout,
    drop_premount_refresh,
)
from tui.app.render.steady_height import set_block_content

# Markdown blocks style inline text through four component classes. Textual works out each
# block's component styles when the block is mounted (a stylesheet pass per class), a large
# part of mounting a reply's blocks. The styles are the same for every block of a reply, so
# the reply's Markdown works them out once and its blocks read them from it.
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
    """Mixin for a Markdown block (first in the bases). `_parse_key` is the tokens the block
    now shows (None: not known); `_update_from_block` (what `append()` calls on the last
    block) works in place for headings and lists as well."""

    _parse_key: BlockKey | None = None
    _item_keys: list[BlockKey | None]  # a list's items, in order (lists only)

    async def _update_from_block(self, block: Any) -> None:
        same_kind = type(block) is type(self)  # (a test that would narrow `block` for mypy)
        if same_kind:
            if isinstance(self, MarkdownParagraph):
                set_block_content(self, block._content)  # in place, as Textual does
                self._copy_context(block)
                self._parse_key = block._parse_key
                return
            if isinstance(self, MarkdownFence):
                await super()._update_from_block(block)  # type: ignore[misc] # in place
                self._parse_key = block._parse_key
                return
            if isinstance(self, MarkdownHeader):
                update_heading(self, block)
                return
            if isinstance(self, MarkdownList) and await update_list(self, block, update_blocks):
                return
        # Textual's way: removed, and the new block (keyed itself) mounted in its place.
        self._parse_key = None
        await super()._update_from_block(block)  # type: ignore[misc]


def update_heading(shown: Any, fresh: Any) -> None:
    set_block_content(shown, fresh._content)
    shown._copy_context(fresh)
    # Its id (a slug of the text it was first built with, plus the widget's own id) cannot
    # change once mounted; it only has to be unique (the table of contents scrolls to it,
    # anchors are matched against the text), so the heading now shows what a fresh one would.
    shown._parse_key = fresh._parse_key


async def update_blocks(container: Widget, shown: Sequence[Any], fresh: Sequence[Any]) -> None:
    """Make `container`'s blocks `shown` show `fresh` (built, not mounted), position by
    position: a block with the same key is kept, a paragraph, code fence, heading or list
    updated in place (it then shows exactly what the fresh block would), any other replaced."""
    for index, block in enumerate(fresh):
        if index >= len(shown):
            await container.mount(block)
        elif shown[index]._parse_key is None or shown[index]._parse_key != block._parse_key:
            await update_block(container, shown[index], block)
    if len(shown) > len(fresh):
        await container.remove_children(shown[len(fresh) :])


async def update_block(container: Widget, shown: Any, fresh: Any) -> None:
    if type(shown) is type(fresh):
        if isinstance(shown, (MarkdownParagraph, MarkdownFence, MarkdownHeader)):
            await shown._update_from_block(fresh)
            shown.source_range = fresh.source_range
            return
        if isinstance(shown, MarkdownList) and await update_list(shown, fresh, update_blocks):
            shown.source_range = fresh.source_range
            return
    await container.mount(fresh, before=shown)
    await shown.remove()


def key_blocks(
    block: Any, keys: Sequence[BlockKey], position: dict[int, int], ends: dict[int, int]
) -> None:
    """Key a built block and the blocks inside it by the tokens each spans."""
    start = position.get(id(block._token))
    if start is not None:
        block._parse_key = tuple(keys[start : ends.get(start, start + 1)])
    for inner in block._blocks:
        key_blocks(inner, keys, position, ends)
    if isinstance(block, MarkdownList):
        items: list[Any] = [inner for inner in block._blocks if isinstance(inner, MarkdownListItem)]
        block._item_keys = [item._parse_key for item in items]  # type: ignore[attr-defined]


_BLOCK_CLASSES: dict[type, type] = {}
BOX_FROM_CONTENT = (MarkdownParagraph, MarkdownHeader, MarkdownHorizontalRule, MarkdownFence)


class ReplyMarkdown(LayoutWithoutRepaint, StoreSizeWithoutRelayout, Markdown):
    """Markdown that grows without a second layout per write (see single_layout), arranges
    its blocks once per layout pass (see one_arrangement) and only the live ones (see
    settled_blocks), updates its last block in place, and whose final update re-mounts only
    the blocks that changed."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {*INLINE_COMPONENTS, BULLET_COMPONENT}
    DEFAULT_CSS = INLINE_STYLES_CSS + BULLET_STYLES_CSS
    repaint_growth_only = True  # see growth_repaint: grows at the bottom as it streams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fold = SettledLines()
        # The settled blocks the last arrangement placed, with their sizes.
        self._settled_placed: dict[Widget, Size] = {}
        self._settled_width = 0  # the width they were placed at
        self._refold_wanted = False  # lay out once more when blocks wait to be folded
        self._generation = 0  # part of the arrangement's cache key (see _refold)

    def compose(self) -> Any:
        yield self._fold

    def _blocks(self) -> list[Any]:
        return [child for child in self._nodes if isinstance(child, MarkdownBlock)]

    def arrange(self, size: Size, optimal: bool = False) -> Any:
        size = arranged_size(size)  # one arrangement per width (see one_arrangement)
        fold = self._fold
        # Textual's cache of arrangements, emptied when a block asks for a layout.
        cache: Any = self._arrangement_cache
        key = self._arrangement_key(size, optimal)
        cached = cache.get(key)
        if cached is not None:
            return cached
        if optimal or not fold.is_mounted:
            result = arrange_blocks(self, self._blocks(), size, optimal)
        else:
            result = arrange_settled(self, fold, self._blocks(), size, optimal)
            if self._refold_wanted and self._settled_placed:
                self._refold_wanted = False
                self.call_after_refresh(self._refold)
        cache[self._arrangement_key(size, optimal)] = result
        return result

    def _arrangement_key(self, size: Size, optimal: bool) -> tuple[Any, ...]:
        # Textual keys a container's arrangement by a count of changes to the node lists
        # anywhere below it, yet a change deep inside a block (a code fence's label styled
        # after its mount) moves none of the reply's blocks: what is arranged here is the
        # reply's own children, shown or not (a block whose size changes asks for a layout,
        # which empties the cache). A new arrangement also folds blocks (settled_blocks), and
        # must come from the screen's layout pass, which sizes the fold.
        children = tuple((id(child), child.display) for child in self._nodes)
        fold = self._fold
        return (size, children, optimal, fold.version, self._generation, self.app.theme)

    def _refold(self) -> None:
        """Lay out again, to fold the blocks the last layout placed (after a full update,
        a theme or width change: no write follows to do it)."""
        self._generation += 1
        self.refresh(layout=True)

    @property
    def displayed_children(self) -> list[Widget]:
        # Folded blocks are not laid out (and not selectable): the fold stands for them.
        folded = len(self._fold.folded)
        shown: list[Widget] = [self._fold] if folded else []
        shown.extend(block for block in self._blocks()[folded:] if block.display)
        return shown

    @property
    def displayed_and_visible_children(self) -> list[Widget]:
        return [child for child in self.displayed_children if child.visible]

    def get_block_class(self, block_name: str) -> Any:
        # Each block kind, same name (so CSS type selectors still match), with the mixins.
        base = super().get_block_class(block_name)
        if base not in _BLOCK_CLASSES:
            mixins: tuple[type, ...] = (KeyedBlock, StoreSizeWithoutRelayout)
            if issubclass(base, BOX_FROM_CONTENT):
                mixins += (BoxIgnoresContainerHeight,)
            if issubclass(base, MarkdownParagraph):
                mixins += (OwnBullet,)  # a list item that is one paragraph (list_rows)
            if issubclass(base, MarkdownList):
                # A drawn list's box comes from its lines alone (drawn_lists).
                mixins += (DrawnList, BoxIgnoresContainerHeight)
            if issubclass(base, MarkdownFence):
                mixins += (FenceCode,)
            if base._get_component_classes() == INLINE_COMPONENTS:
                mixins += (InlineStylesFromDocument,)
            # Lists and quotes only lay their children out, top to bottom (growth_repaint).
            grows = issubclass(base, (MarkdownList, MarkdownBlockQuote))
            attributes = {"repaint_growth_only": grows}
            _BLOCK_CLASSES[base] = type(base.__name__, (*mixins, base), attributes)
        return _BLOCK_CLASSES[base]

    def _parse_markdown(self, tokens: Any) -> Any:
        tokens = tokens if isinstance(tokens, list) else list(tokens)
        keys = [token_key(token) for token in tokens]
        position = {id(token): index for index, token in enumerate(tokens)}
        ends = span_ends(tokens)
        for block in super()._parse_markdown(tokens):
            drop_premount_refresh(block)
            key_blocks(block, keys, position, ends)
            yield block

    def update(self, markdown: str) -> AwaitComplete:
        if not self.is_mounted or not self._shown_blocks():
            return super().update(markdown)  # nothing shown yet: Textual's own path
        return AwaitComplete(self._update_changed_blocks(markdown))

    def _shown_blocks(self) -> list[Any]:
        return [child for child in self.children if isinstance(child, MarkdownBlock)]

    async def _update_changed_blocks(self, markdown: str) -> None:
        """Textual's update(), keeping each block a fresh parse builds the same."""
        parser = shared_parser() if self._parser_factory is None else self._parser_factory()
        async with self.lock:
            tokens = parser.parse(markdown)
            fresh = top_level_blocks(tokens)
            shown = self._shown_blocks()
            self._markdown = markdown
            self._theme = self.app.theme
            self._table_of_contents = None
            lines = markdown.splitlines()
            self._last_parsed_line = len(lines) - (1 if lines and lines[-1] else 0)
            with self.app.batch_update():
                for index, fresh_block in enumerate(fresh):
                    if index < len(shown) and shown[index]._parse_key == fresh_block.key:
                        shown[index].source_range = fresh_block.source_range
                        continue
                    self._fold.cut(index)  # this block changes: laid out live again
                    if index < len(shown):
                        self._settled_placed.pop(shown[index], None)
                    built = list(self._parse_markdown(tokens[fresh_block.start : fresh_block.end]))
                    if len(built) != 1:
                        continue  # not a block Textual builds (never seen): nothing to show
                    if index < len(shown):
                        await update_block(self, shown[index], built[0])
                    else:
                        await self.mount(built[0])
                if len(shown) > len(fresh):
                    self._fold.cut(len(fresh))
                    await self.remove_children(shown[len(fresh) :])
            self._refold_wanted = True
        self.post_message(
            Markdown.TableOfContentsUpdated(self, self.table_of_contents).set_sender(self)
        )
