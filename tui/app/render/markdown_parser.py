"""One Markdown parser for every reply."""

from __future__ import annotations

from typing import Any

_PARSER: Any = None


def shared_parser() -> Any:
    """One parser for every reply: Markdown.append otherwise builds a new MarkdownIt per write."""
    global _PARSER
    if _PARSER is None:
        from markdown_it import MarkdownIt

        _PARSER = MarkdownIt("gfm-like")
    return _PARSER
