"""How many tokens a request's prompt is, and how many of them the prefix cache serves.

The OpenAI dialect counts as the client does (the same TokenCounter, so both sides agree); a
dialect with a chat template counts the template's text with the server's own tokenizer, the
same count its tokenizer endpoints give for those messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tui.demo.dialects import Dialect
from tui.demo.prefix import cached_tokens
from tui.demo.templates import render
from tui.demo.tokenizer import ServerTokenizer
from tui.engine.tokens.counter import get_counter


def count_prompt_tokens(model: str, messages: list[dict]) -> int:
    """Prompt tokens as the client counts them (same TokenCounter), so both sides agree."""
    return get_counter(model).count_messages(messages)


@cache
def server_tokenizer(template: str) -> ServerTokenizer:
    return ServerTokenizer(template)


def template_tokens(template: str, messages: list[dict]) -> list[str]:
    """The tokens of the chat template's text for `messages`, generation prompt included."""
    return server_tokenizer(template).pieces(render(template, messages))


@dataclass(frozen=True)
class PromptCount:
    tokens: int
    cached: int  # of `tokens`, served by the prefix cache: no prefill
    pieces: list[str] | None  # a template dialect's prompt tokens, for the cache to keep


def count_prompt(
    dialect: Dialect,
    model: str,
    messages: list[dict],
    shared_messages: int,
    cached_pieces: list[str] | None,
) -> PromptCount:
    """The prompt's count; `shared_messages` / `cached_pieces` are what the cache holds (0 and
    None when the cache is off). Runs off the event loop: counting a long prompt takes ms."""
    if dialect.template is None:
        total = count_prompt_tokens(model, messages)
        cached = count_prompt_tokens(model, messages[:shared_messages]) if shared_messages else 0
        return PromptCount(total, cached, None)
    pieces = template_tokens(dialect.template, messages)
    cached = 0
    if cached_pieces is not None:
        cached = cached_tokens(cached_pieces, pieces, dialect.cache_block or 1)
    return PromptCount(len(pieces), cached, pieces)
