"""How many tokens a reply's output holds, and how many of them arrived after its first token:
the record's TPOT and tokens/s divide the span from the first token to the last by the tokens
that arrived in it, so a rate never mixes one count with another's span.

The server's `usage.completion_tokens` when it sends it; reasoning it counted there but never
streamed (OpenAI's hidden thinking) was decoded before the first token, outside the span. A
reply without usage (a server that ignores include_usage, a cancelled or cut-off stream) is
counted here: by its chunks while they carry one token each, as llama.cpp, vLLM and the demo
stream them (another tokenizer's count of the text is 10-40 % off theirs); by the local count
of its text when the chunks plainly carry several.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tui.engine.tokens.counter import TokenCounter


class Reply(Protocol):
    """What a reply assembled from its chunks (reply_assembly.Reply) tells the count."""

    @property
    def token_times(self) -> Sequence[float]: ...
    @property
    def completion_tokens_usage(self) -> int | None: ...
    @property
    def has_reasoning(self) -> bool: ...
    @property
    def first_chunk_counted(self) -> str: ...
    def counted_texts(self) -> tuple[str, ...]: ...


# More tokens a chunk than this, by the local count: the chunks carry several each (a chunk's
# text of one server token counts 1-2 tokens with another tokenizer).
SEVERAL_TOKENS_A_CHUNK = 2.0


@dataclass(frozen=True, slots=True)
class OutputCount:
    tokens: int
    source: str  # "usage" (the server's) or "counted" (here)
    after_first: int  # of them, the tokens that arrived after the first token's chunk


def output_count(
    reply: Reply, counter: TokenCounter | None, reasoning_tokens: int | None = None
) -> OutputCount | None:
    """The reply's output tokens (None: no usage and no token arrived); `reasoning_tokens`: the
    server's count of its thinking, part of its usage."""
    chunks = len(reply.token_times)
    usage = reply.completion_tokens_usage
    if usage is not None:
        hidden = (reasoning_tokens or 0) if not reply.has_reasoning else 0
        return OutputCount(usage, "usage", usage - hidden - 1)
    if not chunks:
        return None
    if counter is not None:
        counted = sum(counter.count_text(text) for text in reply.counted_texts() if text)
        if counted > SEVERAL_TOKENS_A_CHUNK * chunks:
            first = counter.count_text(reply.first_chunk_counted)
            return OutputCount(counted, "counted", counted - first)
    return OutputCount(chunks, "counted", chunks - 1)
