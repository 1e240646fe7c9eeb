"""Which request class a chat request is in, judged by what the user asked for and can see.

A chat client sends the same `max_tokens` with every message (2,048 by default), so the output
limit alone would put "What is the capital of France?" with the long generations. A request is
*long generation* when any of these holds, and *short Q&A* otherwise:

1. an output length was asked for this request (`ask --max-tokens N`, the values `check` sends):
   the class is the one that length falls in;
2. the latest user message asks to write something: it starts with write, generate, draft,
   compose, create, produce, rewrite or implement (after "please", "can you" or "could you");
3. it asks for a length: "N words" or "N tokens" with N ≥ 300, "N paragraphs" or "N pages"
   with N ≥ 3;
4. the prompt is long: over 8,000 characters in all (about 2,000 tokens: its prefill alone is
   seconds on a small server).

Short Q&A is the first configured class (the narrowest: `short_qa` by default); long generation
is the class the request's `max_tokens` falls in (`long_generation` by default). Only text is
looked at (no tokenizer), so classifying costs nothing before the request is sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tui.engine.metrics.record import RequestClass, classify

LONG_PROMPT_CHARS = 8_000
LONG_LENGTH_WORDS = 300  # words or tokens
LONG_LENGTH_PARTS = 3  # paragraphs or pages
GENERATION_VERBS = (
    "write",
    "generate",
    "draft",
    "compose",
    "create",
    "produce",
    "rewrite",
    "implement",
)

_ASKS_TO_WRITE = re.compile(
    r"^\W*(?:please\s+|(?:can|could|would)\s+you\s+(?:please\s+)?)?"
    rf"({'|'.join(GENERATION_VERBS)})\b",
    re.IGNORECASE,
)
_LENGTH = re.compile(r"\b(\d[\d,]*)\s*-?\s*(words?|tokens?|paragraphs?|pages?)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ClassChoice:
    request_class: RequestClass
    reason: str  # why, in a few words, e.g. "a short prompt, no length asked"


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


def _latest_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return _text(message.get("content"))
    return ""


def _length_asked(text: str) -> str | None:
    for match in _LENGTH.finditer(text):
        number = int(match.group(1).replace(",", ""))
        unit = match.group(2).lower()
        if unit.startswith(("word", "token")) and number >= LONG_LENGTH_WORDS:
            return f"asks for {number:,} {unit}"
        if unit.startswith(("paragraph", "page")) and number >= LONG_LENGTH_PARTS:
            return f"asks for {number:,} {unit}"
    return None


def long_generation_reason(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """Why the request reads as long generation (rules 2-4), or None for short Q&A."""
    latest = _latest_user_text(messages)
    if match := _ASKS_TO_WRITE.match(latest):
        return f"asks to {match.group(1).lower()}"
    if (length := _length_asked(latest)) is not None:
        return length
    characters = sum(len(_text(message.get("content"))) for message in messages)
    if characters > LONG_PROMPT_CHARS:
        return f"a long prompt ({characters:,} characters)"
    return None


def classify_request(
    messages: Sequence[Mapping[str, Any]],
    max_tokens: int,
    max_tokens_asked: bool,
    classes: Sequence[RequestClass],
) -> ClassChoice | None:
    """The request's class and why (None when no class covers it)."""
    if not classes:
        return None
    if max_tokens_asked:
        chosen = classify(max_tokens, classes)
        return None if chosen is None else ClassChoice(chosen, f"max_tokens {max_tokens:,} asked")
    reason = long_generation_reason(messages)
    if reason is None:
        return ClassChoice(classes[0], "a short prompt, no length asked")
    chosen = classify(max_tokens, classes)
    return None if chosen is None else ClassChoice(chosen, reason)
