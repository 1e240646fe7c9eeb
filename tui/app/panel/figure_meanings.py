"""What the latency panel's figures mean, in the README's words: the help screen's section and
the panel's tooltips read them from here, so the two never say different things."""

from __future__ import annotations

# (figure, what it means), in the order the panel shows them.
FIGURE_MEANINGS: tuple[tuple[str, str], ...] = (
    (
        "TTFT",
        "time to first token: from the request's start (after every client-side preparation) "
        "to the first chunk carrying text, reasoning or a tool call; retries count in it. "
        "Without streaming it is the whole reply (TTFT=total)",
    ),
    (
        "target",
        "the request class (short Q&A, long generation) and its TTFT target: at or under it "
        "is met (green), over it missed (amber, red from the error threshold)",
    ),
    (
        "waterfall",
        "TTFT taken apart: connect (DNS, TCP, TLS; 'reused' on a kept connection) and send, "
        "measured by the client; queue and prefill as the server reports them; what remains "
        "is network + queue. The parts add up to TTFT; a part nobody measured is not shown",
    ),
    ("TTFB", "time to first byte: from the start to the first event of the stream, of any kind"),
    ("total", "from the start to the last token (a trailing usage chunk does not extend it)"),
    ("TPOT", "time per output token after the first: (total - TTFT) / (output tokens - 1)"),
    ("tok/s", "output tokens per second after the first token: 1000 / TPOT"),
    (
        "cached",
        "prompt tokens the server's prefix cache served (it computed only the rest): a warm "
        "request reuses the previous prompt's opening, a cold one does not",
    ),
    (
        "answer",
        "time to the first answer token, after a reasoning model's thinking (= TTFT without it); "
        "thinking: the reasoning tokens the server counted",
    ),
    (
        "pause",
        "no token for longer than chunk_timeout_ms: shown while it lasts, the reply goes on; "
        "gap is the longest one after the first token",
    ),
    (
        "buffered",
        "the streamed reply arrived all at once at its end: a proxy between here and the model "
        "holds the stream",
    ),
    (
        "prompt",
        "the next request's prompt tokens: the server's own count where its tokenizer answers, "
        "else a local estimate (≈); trimming keeps it under the budget, the output reserve "
        "drawn after it",
    ),
)


def meaning(figure: str) -> str:
    """One figure's meaning (KeyError for a figure not listed)."""
    return dict(FIGURE_MEANINGS)[figure]


def tooltip(*figures: str) -> str:
    """Several figures' meanings, one paragraph each, for one tooltip."""
    return "\n\n".join(f"{figure}: {meaning(figure)}" for figure in figures)
