"""llama.cpp's prompt-prefix reuse, simulated: what the previous request left in the cache.

Measured here (DESIGN.md): llama.cpp's server keeps the previous prompt in its slot, so an
identical repeat reaches its first token in 20-50 ms instead of seconds, and a conversation
that only appends messages pays prefill for the new ones. The demo compares whole messages,
not tokens: the cached part is the leading messages identical to the previous request's.
"""

from __future__ import annotations

from collections.abc import Sequence


class PrefixCache:
    """The messages of the last request the model answered: one slot, one cached prompt."""

    def __init__(self) -> None:
        self._messages: tuple[dict, ...] = ()

    def shared(self, messages: Sequence[dict]) -> int:
        """How many leading messages are identical to the cached prompt's."""
        count = 0
        for cached, message in zip(self._messages, messages, strict=False):
            if cached != message:
                break
            count += 1
        return count

    def remember(self, messages: Sequence[dict]) -> None:
        self._messages = tuple(messages)
