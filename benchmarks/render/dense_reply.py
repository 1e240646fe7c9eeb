"""Replies dense with Markdown blocks: what a coding answer from a fast provider looks like.

`dense_markdown(kind, blocks_per_1k, length)` is deterministic Markdown of `length` demo
tokens (the demo endpoint's tokenizer: about one word, space or punctuation mark a token):
short paragraphs between

- `code`: fenced code blocks of 2-3 lines, every third one with a line wider than a chat pane;
- `lists`: bullet lists of 3-5 items, every fourth one with a nested item;
- `mixed`: both, in turn (the shape of the issue's report: paragraphs, code blocks and twice
  as many list items as code blocks);

`blocks_per_1k` code blocks or lists per 1,000 tokens (the paragraphs between them shrink as
it grows). The render benchmark's endpoint serves it after the demo reply's heading (so the
first visible word is the same as the prose reply's); bench_settled_blocks.py and the
oracle tests stream it into widgets.
"""

from __future__ import annotations

import functools

from tui.demo.reply import tokenize

KINDS = ("code", "lists", "mixed")

_SENTENCES = (
    "The writer coalesces tokens and appends them to the reply's last block.",
    "Each settled block is painted once, so a write costs the same at the end as at the start.",
    "A fast provider streams a coding answer at hundreds of tokens a second.",
    "Lists and code blocks are where a terminal renderer spends its time.",
    "The screen lays out only what can still change.",
)


def _paragraph(index: int, tokens: int) -> str:
    words: list[str] = []
    sentence = index
    while len(tokenize(" ".join(words))) < tokens:
        words.append(_SENTENCES[sentence % len(_SENTENCES)])
        sentence += 1
    text = " ".join(words)
    return "".join(tokenize(text)[:tokens]).rstrip() + "."


def _code(index: int) -> str:
    lines = [f"def step_{index}(tokens):"]
    if index % 3 == 0:
        lines.append(
            f"    log.info('step {index}: %d tokens, %d characters, writer pace %.1f ms, "
            "layout %.1f ms', len(tokens), total, pace_ms, layout_ms)"
        )
    lines.append(f"    return len(tokens) + {index}")
    return "```python\n" + "\n".join(lines) + "\n```"


def _list(index: int) -> str:
    items = [f"- item {index}.{n}: a **flat** cost" for n in range(3 + index % 3)]
    if index % 4 == 0:
        items.insert(2, "  - a nested point with `inline code`")
    return "\n".join(items)


def dense_markdown(kind: str, blocks_per_1k: int, length: int) -> str:
    """Markdown of exactly `length` demo tokens (see the module)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; known: {', '.join(KINDS)}")
    per_unit = 1000 // max(1, blocks_per_1k)  # tokens per paragraph and block
    parts: list[str] = []
    tokens = 0
    index = 0
    while tokens < length:
        use_code = kind == "code" or (kind == "mixed" and index % 3 == 0)
        block = _code(index) if use_code else _list(index)
        paragraph = _paragraph(index, max(6, per_unit - len(tokenize(block))))
        parts.extend([paragraph, block])
        tokens += len(tokenize(paragraph)) + len(tokenize(block)) + 2
        index += 1
    tokens_of_text = tokenize("\n\n".join(parts))
    while len(tokens_of_text) < length:  # the count above is close, not exact
        parts.append(_paragraph(index, 40))
        index += 1
        tokens_of_text = tokenize("\n\n".join(parts))
    return "".join(tokens_of_text[:length])


@functools.lru_cache(maxsize=8)
def _dense_tokens(kind: str, blocks_per_1k: int, length: int) -> tuple[str, ...]:
    return tuple(tokenize(dense_markdown(kind, blocks_per_1k, length))[:length])


def dense_tokens(kind: str, blocks_per_1k: int, length: int) -> list[str]:
    """`dense_markdown` as demo tokens (built once per process: the endpoint serves it to
    every request of a run)."""
    return list(_dense_tokens(kind, blocks_per_1k, length))
