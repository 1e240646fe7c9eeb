"""Which top-level Markdown blocks a fresh parse would build exactly as they are on screen.

A reply is streamed with `Markdown.append` (only the last block re-parsed per write) and gets
one full `update()` at the end, which parses the whole reply again. Textual's `update()`
then removes every block and mounts new ones, although for almost every reply the new blocks
are the ones already shown: measured in benchmarks/render, that re-mount was 11 of the 41 KB
a 60-token reply sent to the terminal, and the biggest single frame of a long reply.

So the reply's Markdown keys each top-level block by the tokens it was built from. The full
update parses the whole text, splits the tokens the way Textual's block builder does, keeps
each shown block whose key equals the fresh block's at the same position, and builds the
others as Textual would (so the blocks shown are, position by position, the fresh parse's).
The key is everything a block is built from: each token's type, tag, nesting, level, info,
markup, content and attributes, and its inline children (so a link whose reference is defined
further down, which streaming could not resolve, differs). Source line numbers are left out:
they do not change what is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Top-level tokens that are a whole block by themselves (Textual yields a block for each).
LEAF_BLOCKS = frozenset({"hr", "fence", "code_block"})

BlockKey = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class TopLevelBlock:
    start: int  # index of its first token
    end: int  # one past its last token
    key: BlockKey
    source_range: tuple[int, int]  # the lines Textual records for the block


def token_key(token: Any) -> BlockKey:
    children = token.children
    return (
        token.type,
        token.tag,
        token.nesting,
        token.level,
        token.info,
        token.markup,
        token.content,
        tuple(sorted(token.attrs.items())) if token.attrs else (),
        tuple(token_key(child) for child in children) if children else (),
    )


def top_level_blocks(tokens: Sequence[Any]) -> list[TopLevelBlock]:
    """Split a parse into the top-level blocks Textual's `Markdown._parse_markdown` yields:
    one per top-level open/close pair, hr or fence. Tokens it builds nothing from (an HTML
    block) go with the block after them; trailing ones with none (as in Textual)."""
    blocks: list[TopLevelBlock] = []
    depth = 0
    start = 0
    opener: Any = None
    for index, token in enumerate(tokens):
        if opener is None and (token.nesting == 1 or token.type in LEAF_BLOCKS):
            opener = token
        depth += token.nesting
        if depth == 0 and (token.nesting == -1 or token.type in LEAF_BLOCKS):
            end = index + 1
            line_map = opener.map if opener is not None and opener.map is not None else None
            blocks.append(
                TopLevelBlock(
                    start,
                    end,
                    tuple(token_key(t) for t in tokens[start:end]),
                    (line_map[0], line_map[1]) if line_map else (0, 0),
                )
            )
            start, opener = end, None
    return blocks


def same_blocks(shown: Sequence[BlockKey | None], fresh: Sequence[TopLevelBlock]) -> list[bool]:
    """For each shown block: does the fresh parse build the same block at its position?
    (None: not known, so no.) Shown blocks past the fresh ones are never kept."""
    return [
        key is not None and index < len(fresh) and key == fresh[index].key
        for index, key in enumerate(shown)
    ]
