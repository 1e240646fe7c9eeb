"""A server's prompt-prefix reuse, simulated: what the previous request left in the cache.

llama.cpp's server keeps the previous prompt in its slot, so an identical repeat reaches its
first token almost at once instead of after seconds of prefill, and a conversation that only
appends messages pays prefill for the new ones. A dialect with a chat template
compares tokens, as llama.cpp (one token at a time) and vLLM (16-token blocks) do, and always
computes the prompt's last token again (the logits of the first reply token need it); the
OpenAI dialect compares whole leading messages.
"""

from __future__ import annotations

from collections.abc import Sequence


class PrefixCache:
    """The last prompt the model read: one slot, one cached prompt."""

    def __init__(self) -> None:
        self._messages: tuple[dict, ...] = ()
        self._tokens: list[str] = []

    def shared(self, messages: Sequence[dict]) -> int:
        """How many leading messages are identical to the cached prompt's."""
        count = 0
        for cached, message in zip(self._messages, messages, strict=False):
            if cached != message:
                break
            count += 1
        return count

    @property
    def tokens(self) -> list[str]:
        """The cached prompt's tokens (a snapshot to compare against off the event loop)."""
        return self._tokens

    def remember(self, messages: Sequence[dict], tokens: list[str] | None = None) -> None:
        self._messages = tuple(messages)
        self._tokens = tokens if tokens is not None else []


def cached_tokens(cached: list[str], prompt: list[str], block: int) -> int:
    """Prompt tokens a token-level cache holding `cached` serves: the common prefix, in whole
    blocks, leaving at least the last prompt token to compute."""
    limit = min(len(cached), len(prompt) - 1)
    common = 0
    while common < limit:  # slices compare at C speed; only the differing stretch is walked
        end = min(common + 1024, limit)
        if cached[common:end] != prompt[common:end]:
            common = next(i for i in range(common, end) if cached[i] != prompt[i])
            break
        common = end
    return common - common % block
