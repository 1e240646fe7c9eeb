"""What a reply reports about itself: `usage` in each dialect's shape, and llama.cpp's `timings`.

The numbers are the demo's own: the prompt's count and its cached part, the simulated prefill of
the uncached part, and the decode time between the first and the last token as sent.
"""

from __future__ import annotations

from typing import Any

from tui.demo.dialects import Dialect
from tui.demo.plan import ReplyPlan


def usage(
    dialect: Dialect, prompt_tokens: int, cached: int, completion: int, reasoning: int
) -> dict[str, Any]:
    """`usage` as the dialect's server sends it; reasoning tokens are part of `completion`."""
    body: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": prompt_tokens + completion,
    }
    if dialect.usage_details == "openai":
        body["prompt_tokens_details"] = {"cached_tokens": cached, "audio_tokens": 0}
        body["completion_tokens_details"] = {
            "reasoning_tokens": reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        }
    elif dialect.usage_details == "cached":
        body["prompt_tokens_details"] = {"cached_tokens": cached}
        if reasoning:
            body["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return body


def _ratio(numerator: float, denominator: float) -> float | None:
    # llama.cpp divides regardless and its JSON writer turns inf and nan into null.
    return numerator / denominator if denominator else None


def timings(
    prompt_tokens: int, cached: int, prompt_ms: float, predicted_n: int, predicted_ms: float
) -> dict[str, Any]:
    """llama.cpp's `timings` object, with its field names and order.

    Shape from ggml-org/llama.cpp tools/server/server-task.cpp, `result_timings::to_json()`:
    `prompt_n` counts only the tokens prefilled (the cached ones are `cache_n`), and the last
    chunk of a stream (or a non-stream body) carries it.
    """
    prompt_n = prompt_tokens - cached
    # Microseconds are the clock's real resolution here; further digits are float noise.
    prompt_ms, predicted_ms = round(prompt_ms, 3), round(predicted_ms, 3)
    return {
        "cache_n": cached,
        "prompt_n": prompt_n,
        "prompt_ms": prompt_ms,
        "prompt_per_token_ms": _ratio(prompt_ms, prompt_n),
        "prompt_per_second": _ratio(1000.0 * prompt_n, prompt_ms),
        "predicted_n": predicted_n,
        "predicted_ms": predicted_ms,
        "predicted_per_token_ms": _ratio(predicted_ms, predicted_n),
        "predicted_per_second": _ratio(1000.0 * predicted_n, predicted_ms),
    }


def report(
    entry: dict, plan: ReplyPlan, dialect: Dialect, sent: int, decode_ms: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(usage, timings) of a reply that sent `sent` tokens after `decode_ms` of decoding."""
    hidden = plan.hidden_reasoning
    reasoning = min(sent, len(plan.reasoning)) + hidden
    counted = usage(
        dialect, entry["prompt_tokens"], entry["cached_prompt_tokens"], sent + hidden, reasoning
    )
    figures = timings(
        entry["prompt_tokens"],
        entry["cached_prompt_tokens"],
        entry["prefill_ms"],
        sent + hidden,
        decode_ms,
    )
    if entry.get("draft_acceptance"):
        figures.update(draft_figures(sent + hidden, entry["draft_acceptance"]))
    return counted, figures


def draft_figures(predicted_n: int, acceptance: float) -> dict[str, int]:
    """llama.cpp's speculative-decoding counts, played as if the draft model proposed one token
    for each token the reply holds and the model accepted `acceptance` of them."""
    return {"draft_n": predicted_n, "draft_n_accepted": round(predicted_n * acceptance)}
