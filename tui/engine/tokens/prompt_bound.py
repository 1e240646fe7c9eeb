"""The most tokens a conversation can count as, worked out without a tokenizer.

A BPE token covers at least one byte of text, so a text counts as at most its UTF-8 length
(and the character estimate, the counter's last resort, counts fewer still). Adding the chat
framing exactly as tokens.py counts it gives a bound on `TokenCounter.count_messages`: a
conversation under the budget by this bound needs no trimming decision, so `ask` can send it
before loading a vocabulary (0.5 s) and count it for the record after the reply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

# The chat framing, as OpenAI's recipe counts it (tokens.py counts with these).
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3
IMAGE_PART_TOKENS = 85


def _text(value: object) -> str:
    """A value as the counter turns it into text (tokens.py's rule)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _size(value: object) -> int:
    return len(_text(value).encode("utf-8", "surrogatepass"))


def _content_bound(content: object) -> int:
    if content is None or isinstance(content, str):
        return _size(content)
    if isinstance(content, (list, tuple)):
        total = 0
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                total += _size(part.get("text"))
            elif isinstance(part, Mapping) and part.get("type") == "image_url":
                total += IMAGE_PART_TOKENS
            else:
                total += _size(part)
        return total
    return _size(content)


def message_bound(message: Mapping[str, Any]) -> int:
    total = TOKENS_PER_MESSAGE + _size(message.get("role")) + _content_bound(message.get("content"))
    name = message.get("name")
    if name is not None:
        total += TOKENS_PER_NAME + _size(name)
    tool_calls = message.get("tool_calls")
    if tool_calls:
        for call in tool_calls if isinstance(tool_calls, (list, tuple)) else [tool_calls]:
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping):
                total += _size(function.get("name")) + _size(function.get("arguments"))
            else:
                total += _size(call)
    return total


def prompt_bound(messages: Sequence[Mapping[str, Any]]) -> int:
    """At least what `TokenCounter.count_messages(messages)` gives, for any vocabulary."""
    return sum(message_bound(message) for message in messages) + REPLY_PRIMING


def fits_without_counting(messages: Sequence[Mapping[str, Any]], budget: int) -> bool:
    """Whether the conversation is within `budget` tokens whatever the tokenizer."""
    return prompt_bound(messages) <= budget
