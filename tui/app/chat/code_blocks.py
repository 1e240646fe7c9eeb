"""Fenced code blocks in a Markdown reply, for "copy the last code block".

Fences follow CommonMark (``` or ~~~, three or more, closed by the same character at least
as long) with one leniency: a fence may be indented any amount, because models often put
code blocks inside list items. A fence still open at the end counts (a reply cut off or
cancelled mid-block still has useful code).
"""

from __future__ import annotations

import re

_OPENING = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


def code_blocks(markdown: str) -> list[str]:
    """The contents of every fenced code block, in order, without the fences."""
    blocks: list[str] = []
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        match = _OPENING.match(lines[index])
        index += 1
        if not match:
            continue
        fence, indent = match["fence"], len(match["indent"].expandtabs(4))
        if fence[0] == "`" and "`" in match["info"]:
            continue  # `` ```inline``` `` code, not a fence (CommonMark rule)
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        while index < len(lines) and not closing.match(lines[index]):
            body.append(_dedent(lines[index], indent))
            index += 1
        index += 1  # skip the closing fence (or run past the end: unterminated)
        blocks.append("\n".join(body))
    return blocks


def last_code_block(markdown: str) -> str | None:
    """The last code block with any non-blank content, or None if there is none."""
    for block in reversed(code_blocks(markdown)):
        if block.strip():
            return block
    return None


def _dedent(line: str, indent: int) -> str:
    """Remove up to `indent` leading spaces: the fence's own indentation."""
    expanded = line.expandtabs(4) if line[:1] == "\t" else line
    stripped = len(expanded) - len(expanded.lstrip(" "))
    return expanded[min(indent, stripped) :]
