"""The demo endpoint's reply text: deterministic, informative Markdown, cut into tokens.

The reply says what the endpoint received and exercises rendering (a heading, a list, a fenced
code block, CJK text, paragraphs of prose). Tokens are regex pieces that never split a
character, so streaming them one per SSE chunk never sends half of a UTF-8 sequence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

MAX_REPLY_TOKENS = 100_000

_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
# Leading whitespace + a word, a single CJK character or 1-3 other symbols (as BPE keeps
# `**` or ``` whole); or trailing
# whitespace. Pieces are str slices, so no code point is ever split.
_PIECE = re.compile(rf"\s*(?:(?:(?![{_CJK}])\w)+|[{_CJK}]|(?:(?![{_CJK}])[^\w\s]){{1,3}})|\s+")
_REPLY_N = re.compile(r"\breply\s+(?:with\s+)?(\d{1,9})\s+tokens?\b", re.IGNORECASE)
_THINK_N = re.compile(r"\bthink\s+(?:for\s+)?(\d{1,9})\s+tokens?\b", re.IGNORECASE)
# A reply may end after a token that closes a sentence, or before a blank line (the end of a
# paragraph, a heading or a code block): never mid-sentence, never inside a code fence.
_SENTENCE_END = frozenset(".!?。！？")

_CODE = """```python
def ttft_ms(prompt_tokens: int) -> float:
    return {fixed:g} + prompt_tokens * {per_token:g}
```"""

_CJK_LINE = "中文：首个令牌延迟（TTFT）越低越好。"

# Filler prose, cycled to reach the requested length; a blank line ends each paragraph so a
# long reply has many Markdown blocks, as a real answer does.
_FILLER = (
    "Time to first token is what a person waits for before anything happens on screen. "
    "It grows with the prompt, because the model must read every prompt token before it "
    "can write the first reply token.",
    "Trimming old history shortens the prompt and therefore the prefill, which is why it "
    "lowers the first-token latency without making the model any faster at writing.",
    "Streaming does not make the model faster either; it shows each token as soon as it "
    "exists, so the wait for the first word is the prefill rather than the whole reply.",
    "After the first token, the decode rate sets the pace. Each later token costs about "
    "the same, and the gaps between chunks tell you whether the server keeps up.",
)


@dataclass(frozen=True)
class ReplySummary:
    """What the reply reports about the request it answers (all numbers simulated)."""

    messages: Sequence[dict]
    prompt_tokens: int
    prefill_ms: float
    model: str
    preset: str
    stream: bool
    fixed_ms: float  # rtt + queue
    prefill_ms_per_token: float
    decode_tokens_per_s: float


def tokenize(text: str) -> list[str]:
    """Split text into stream tokens; ''.join(tokenize(t)) == t."""
    return _PIECE.findall(text)


_FILLER_TOKENS = tuple(tuple(tokenize("\n\n" + paragraph)) for paragraph in _FILLER)


def message_text(message: dict) -> str:
    """The text of a chat message whose content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _asked(pattern: re.Pattern[str], messages: Sequence[dict]) -> int | None:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            match = pattern.search(message_text(message))
            return min(int(match.group(1)), MAX_REPLY_TOKENS) if match else None
    return None


def requested_length(messages: Sequence[dict]) -> int | None:
    """N when the latest user message says "reply N tokens" (capped at MAX_REPLY_TOKENS)."""
    return _asked(_REPLY_N, messages)


def requested_thinking(messages: Sequence[dict]) -> int | None:
    """N when the latest user message says "think N tokens" (capped at MAX_REPLY_TOKENS)."""
    return _asked(_THINK_N, messages)


def sentence_end(tokens: Sequence[str], limit: int) -> int:
    """How many of `tokens` a reply of at most `limit` tokens keeps: up to the last sentence or
    block that ends within the limit (`tokens` must reach one past it when it can); `limit`
    itself when nothing ends that early."""
    for end in range(min(limit, len(tokens)), 0, -1):
        following = tokens[end] if end < len(tokens) else ""
        if following.startswith("\n\n"):
            return end
        last = tokens[end - 1].rstrip()
        if last and last[-1] in _SENTENCE_END and (not following or following[0].isspace()):
            return end
    return min(limit, len(tokens))


def _role_counts(messages: Sequence[dict]) -> str:
    counts = Counter(str(m.get("role", "?")) for m in messages if isinstance(m, dict))
    return ", ".join(f"{n} {role}" for role, n in sorted(counts.items()))


def _document(s: ReplySummary) -> str:
    count = len(s.messages)
    noun = "message" if count == 1 else "messages"
    mode = "streaming" if s.stream else "not streaming"
    return "\n".join(
        [
            "## firsttoken demo reply (simulated)",
            "",
            f"Received **{count} {noun}** ({_role_counts(s.messages)}): "
            f"**{s.prompt_tokens} prompt tokens**, simulated prefill **{s.prefill_ms:.0f} ms**, "
            f"model `{s.model}`, {mode}.",
            "",
            f"- preset `{s.preset}`: {s.prefill_ms_per_token:g} ms per prompt token",
            f"- decode at {s.decode_tokens_per_s:g} tokens/s, one token per chunk",
            '- ask for "reply N tokens" to get another length',
            "",
            _CODE.format(fixed=s.fixed_ms, per_token=s.prefill_ms_per_token),
            "",
            _CJK_LINE,
        ]
    )


def reply_tokens(summary: ReplySummary, length: int) -> list[str]:
    """Exactly `length` tokens: the document, then filler paragraphs, cut at `length`."""
    tokens = tokenize(_document(summary))
    paragraph = 0
    while len(tokens) < length:
        tokens.extend(_FILLER_TOKENS[paragraph % len(_FILLER_TOKENS)])
        paragraph += 1
    return tokens[:length]


def natural_reply(summary: ReplySummary, limit: int) -> list[str]:
    """The reply when no length was asked for: it ends at a sentence within `limit` tokens."""
    tokens = reply_tokens(summary, limit + 1)
    return tokens[: sentence_end(tokens, limit)]


# What a reasoning model thinks before it answers: a few sentences about the request.
_THOUGHTS = (
    "The user sent {count} {noun} with {prompt_tokens} prompt tokens, so I should start by "
    "saying what arrived.",
    "The simulated prefill took {prefill_ms:.0f} ms, which belongs in the answer too.",
    "A short list of the latency settings and the formula as a code block should make it concrete.",
    "Thinking first means the answer starts later than the first token, which is worth a "
    "line of its own.",
)


def reasoning_tokens(summary: ReplySummary, length: int | None) -> list[str]:
    """The thinking before the answer: the whole thought, or exactly `length` tokens of it."""
    count = len(summary.messages)
    values = {
        "count": count,
        "noun": "message" if count == 1 else "messages",
        "prompt_tokens": summary.prompt_tokens,
        "prefill_ms": summary.prefill_ms,
    }
    thought = tokenize(" ".join(t.format(**values) for t in _THOUGHTS))
    if length is None:
        return thought
    tokens = list(thought)
    while len(tokens) < length:
        tokens.extend(tokenize(" ") + thought)
    return tokens[:length]


def offline_reply(length: int, decode_tokens_per_s: float) -> list[str]:
    """The instant demo endpoint's reply to "hello reply N tokens", built without a server:
    the render guard and the render benchmarks feed it straight into widgets."""
    summary = ReplySummary(
        messages=[{"role": "user", "content": f"hello reply {length} tokens"}],
        prompt_tokens=14,
        prefill_ms=1.0,
        model="demo",
        preset="instant",
        stream=True,
        fixed_ms=0.0,
        prefill_ms_per_token=0.05,
        decode_tokens_per_s=decode_tokens_per_s,
    )
    return reply_tokens(summary, length)
