"""The server's progress through the prompt, while the client waits for the first token.

llama.cpp's `llama-server`, asked with `"return_progress": true` in a streamed request, sends
chunks carrying `prompt_progress {total, cache, processed, time_ms}` during the prefill, each
with a role-only delta (`content: null`, no token: the TTFT clock runs on). `processed`
includes the cached part; `time_ms` is the server's time on the prompt so far. From them: how
far the prefill has got, the rate the server computes the prompt at, and when the first token
should come.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Samples a record keeps: the first ones and the latest (a long prompt sends one per batch).
KEPT_SAMPLES = 32


@dataclass(frozen=True, slots=True)
class PrefillSample:
    at: float  # receipt time, perf_counter seconds
    total: int  # the prompt's tokens
    cached: int  # of them, served from the server's prefix cache
    processed: int  # done so far, the cached part included
    server_ms: float | None  # the server's time on the prompt so far

    @property
    def fraction(self) -> float:
        return min(1.0, self.processed / self.total) if self.total > 0 else 1.0

    def as_dict(self, started_at: float) -> dict[str, Any]:
        return {
            "at_ms": round((self.at - started_at) * 1000.0, 3),
            "total": self.total,
            "cached": self.cached,
            "processed": self.processed,
            "server_ms": self.server_ms,
        }


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def prefill_sample(progress: object, at: float) -> PrefillSample | None:
    """A `prompt_progress` object as a sample; None when it is not one (counts missing or
    not whole numbers, processed past the total)."""
    if not isinstance(progress, dict):
        return None
    total, processed = _count(progress.get("total")), _count(progress.get("processed"))
    if total is None or processed is None or processed > total:
        return None
    cached = min(_count(progress.get("cache")) or 0, total)
    time_ms = progress.get("time_ms")
    server_ms = (
        float(time_ms)
        if isinstance(time_ms, int | float) and not isinstance(time_ms, bool) and time_ms >= 0
        else None
    )
    return PrefillSample(at, total, cached, processed, server_ms)


def keep_sample(kept: list[PrefillSample], sample: PrefillSample) -> None:
    """Add `sample`, holding at most KEPT_SAMPLES: past that the newest replaces the last kept,
    so the first ones and the latest stay."""
    if len(kept) < KEPT_SAMPLES:
        kept.append(sample)
    else:
        kept[-1] = sample


def prefill_rate(samples: Sequence[PrefillSample]) -> float | None:
    """Prompt tokens computed a second (the cached part excluded): by the server's own clock
    when it sends `time_ms`, else between the first and last samples' arrival. A server clock
    at zero gives no rate: the samples' arrival then times the network, not the prefill."""
    if not samples:
        return None
    last = samples[-1]
    computed = last.processed - last.cached
    if last.server_ms is not None:
        return computed / (last.server_ms / 1000.0) if last.server_ms > 0 and computed > 0 else None
    first = samples[0]
    span = last.at - first.at
    if span > 0 and last.processed > first.processed:
        return (last.processed - first.processed) / span
    return None


def first_token_eta_s(sample: PrefillSample, rate: float | None) -> float | None:
    """Seconds until the prompt is done at `rate` (the first token follows), from the sample."""
    if rate is None or rate <= 0:
        return None
    return (sample.total - sample.processed) / rate


def progress_words(sample: PrefillSample, rate: float | None, now: float | None = None) -> str:
    """One line: "prefill 2,048 of 7,367 tokens (28%) · 512 cached · 833 tok/s · first token
    in ~6.4 s" (the ETA counted down to `now` when given)."""
    parts = [f"prefill {sample.processed:,} of {sample.total:,} tokens ({sample.fraction:.0%})"]
    if sample.cached:
        parts.append(f"{sample.cached:,} cached")
    if rate is not None:
        parts.append(f"{rate:,.0f} tok/s")
    eta = first_token_eta_s(sample, rate)
    if eta is not None:
        if now is not None:
            eta = max(0.0, eta - (now - sample.at))
        parts.append(f"first token in ~{eta:.1f} s")
    return " · ".join(parts)
