"""Which top-level Markdown blocks a fresh parse would build exactly as they are on screen.

A reply is streamed with `Markdown.append` (only the last block re-parsed per write) and gets
one full `update()` at the end, which parses the whole reply again. Textual's `update()`
then removes every block and mounts new ones, although for almost every reply the new blocks
are the ones already shown: that re-mount is a large part of what a short reply sends to the
terminal, and the biggest single frame of a long reply.

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
    start: int  # index of its opening token (a fence or hr: the token itself)
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


def span_ends(tokens: Sequence[Any]) -> dict[int, int]:
    """For each opening token's index, the index one past its matching close."""
    ends: dict[int, int] = {}
    opened: list[int] = []
    for index, token in enumerate(tokens):
        if token.nesting == 1:
            opened.append(index)
        elif token.nesting == -1 and opened:
            ends[opened.pop()] = index + 1
    return ends


def top_level_blocks(tokens: Sequence[Any]) -> list[TopLevelBlock]:
    """Split a parse into the top-level blocks Textual's `Markdown._parse_markdown` yields:
    one per top-level open/close pair, hr or fence (an HTML block builds nothing). Each key
    covers the block's own tokens, as `span_key` does for a block being built."""
    blocks: list[TopLevelBlock] = []
    depth = 0
    opener: int | None = None
    for index, token in enumerate(tokens):
        if opener is None and (token.nesting == 1 or token.type in LEAF_BLOCKS):
            opener = index
        depth += token.nesting
        if depth == 0 and opener is not None and (token.nesting == -1 or token.type in LEAF_BLOCKS):
            end = index + 1
            line_map = tokens[opener].map
            blocks.append(
                TopLevelBlock(
                    opener,
                    end,
                    tuple(token_key(t) for t in tokens[opener:end]),
                    (line_map[0], line_map[1]) if line_map else (0, 0),
                )
            )
            opener = None
    return blocks
