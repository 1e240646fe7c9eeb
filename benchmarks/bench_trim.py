"""Counting + trimming a 2,000-message conversation after one new message (target: <= 5 ms).

Run: python -m benchmarks.bench_trim [--messages 2000] [--repeats 200]

The conversation is warmed once (every message counted, as the app does while chatting); each
timed repeat then appends one new, never-seen user message and runs what a send does:
`count_messages` for the budget panel, then `trim`. Cold figures (an empty memo) and the
one-off vocabulary load are printed for context. Figures only, no pass/fail on wall clock;
they are saved as the `trim` result (benchmarks/results.py).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from typing import Any

from benchmarks.results import command_line, save
from tui.engine.metrics.record import percentile
from tui.engine.tokens.counter import TokenCounter
from tui.engine.tokens.trim import TrimPolicy, trim

TARGET_MS = 5.0

_WORDS = [
    "latency",
    "token",
    "prefill",
    "decode",
    "stream",
    "budget",
    "trim",
    "model",
    "server",
    "request",
    "reply",
    "cache",
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "for",
    "with",
    "on",
    "that",
    "this",
    "it",
    "as",
    "be",
    "are",
    "at",
    "by",
]
_CODE = "```python\ndef handler(event):\n    return {'status': 200, 'body': event}\n```\n"
_CJK = "首个令牌的延迟取决于提示长度。"


def _prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def conversation(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """A chat of n messages: system prompt, Q&A with code and CJK, and tool exchanges."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a concise assistant. " + _prose(rng, 60)}
    ]
    call = 0
    while len(messages) < n:
        messages.append({"role": "user", "content": _prose(rng, rng.randint(5, 60))})
        if rng.random() < 0.15:  # a tool exchange: one call, one or two results
            ids = [f"call_{call}_{k}" for k in range(rng.randint(1, 2))]
            call += 1
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": i,
                            "type": "function",
                            "function": {"name": "search", "arguments": '{"q": "ttft"}'},
                        }
                        for i in ids
                    ],
                }
            )
            messages += [
                {"role": "tool", "tool_call_id": i, "content": _prose(rng, rng.randint(20, 200))}
                for i in ids
            ]
        reply = _prose(rng, rng.randint(20, 250))
        if rng.random() < 0.2:
            reply += "\n" + _CODE
        if rng.random() < 0.1:
            reply += _CJK * rng.randint(1, 5)
        messages.append({"role": "assistant", "content": reply})
    return messages[:n]


def _ms(seconds: float) -> float:
    return seconds * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--budget", type=int, default=6000)
    parser.add_argument("--model", default="gpt-4o-mini")
    args = parser.parse_args()

    history = conversation(args.messages)
    counter = TokenCounter(args.model)
    started = time.perf_counter()
    counter.load()
    load_ms = _ms(time.perf_counter() - started)

    started = time.perf_counter()
    total = counter.count_messages(history)
    cold_ms = _ms(time.perf_counter() - started)
    print(f"vocabulary: {counter.encoding_name} (exact={counter.exact}), load {load_ms:.1f} ms")
    print(f"conversation: {len(history)} messages, {total} tokens, budget {args.budget}")
    print(f"cold count (empty memo): {cold_ms:.2f} ms")

    strategies: dict[str, dict[str, Any]] = {}
    for strategy in ("priority", "recent"):
        policy = TrimPolicy(strategy=strategy)
        trim(history, args.budget, policy, counter)  # warm (the memo is already full)
        timings: list[float] = []
        misses_before = counter.memo_misses
        for r in range(args.repeats):
            messages = [*history, {"role": "user", "content": f"{strategy} question {r}: " + _CJK}]
            started = time.perf_counter()
            counter.count_messages(messages)
            result = trim(messages, args.budget, policy, counter)
            timings.append(_ms(time.perf_counter() - started))
        misses = (counter.memo_misses - misses_before) / args.repeats
        median = statistics.median(timings)
        p95 = percentile(timings, 95) or 0.0
        verdict = "ok" if median <= TARGET_MS else "OVER TARGET"
        print(
            f"{strategy:8s} count+trim after one new message: median {median:.2f} ms, "
            f"p95 {p95:.2f} ms, min {min(timings):.2f} ms, target <= {TARGET_MS:.0f} ms "
            f"(median {verdict}); "
            f"kept {len(result.kept_indices)}, {result.tokens_before} -> {result.tokens_after} "
            f"tokens, {misses:.0f} memo miss per repeat"
        )
        strategies[strategy] = {
            "median_ms": round(median, 3),
            "p95_ms": round(p95, 3),
            "min_ms": round(min(timings), 3),
            "kept": len(result.kept_indices),
            "tokens_before": result.tokens_before,
            "tokens_after": result.tokens_after,
            "memo_misses_per_repeat": round(misses, 2),
        }
    load = os.getloadavg()[0]
    medians = " and ".join(f"{f['median_ms']:.1f} ms ({name})" for name, f in strategies.items())
    plural = "s" if args.repeats != 1 else ""
    p95s = " and ".join(f"{f['p95_ms']:.1f} ms" for f in strategies.values())
    figures = {
        "messages": len(history),
        "tokens": total,
        "budget": args.budget,
        "model": args.model,
        "vocabulary": counter.encoding_name,
        "exact": counter.exact,
        "repeats": args.repeats,
        "vocabulary_load_ms": round(load_ms, 1),
        "cold_count_ms": round(cold_ms, 2),
        "target_ms": TARGET_MS,
        "strategies": strategies,
        "measured": (
            f"{medians} median at a load of {load:.1f} (p95 {p95s}; {args.repeats} repeat{plural}, "
            f"{len(history):,} messages of {total:,} tokens, budget {args.budget:,}, "
            f"{counter.encoding_name} vocabulary)"
        ),
    }
    save("trim", command_line("benchmarks.bench_trim"), figures)


if __name__ == "__main__":
    main()
