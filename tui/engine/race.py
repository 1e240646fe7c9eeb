"""A race: the same prompt to two or more targets (models, endpoints, settings), round by round,
and which reaches its first token sooner.

One at a time, the targets take turns in an order that reverses every round (A B, B A, A B…),
so drift on a shared machine or server favours no one; `together` sends a round's requests at
once instead (for targets on different servers). Each request's record is an ordinary one, told
apart by its race and target (`RequestRecord.race_id`, `race_target`). The verdict compares the
fastest target's TTFTs with the runner-up's (metrics/comparison.py): by how much, how many
times, and whether the rounds decide it.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from tui.engine.bench import VariantResult
from tui.engine.metrics.comparison import CONFIDENCE, Comparison, compare, fewest_to_decide

# The figures a race reports per target: the record's field and its name in a report.
FIGURES = (
    ("ttft_ms", "TTFT"),
    ("time_to_first_answer_ms", "first answer"),
    ("total_ms", "total"),
    ("tpot_ms", "TPOT"),
    ("output_tokens_per_s", "tok/s"),
)
# The server's own parts of TTFT, where it reports them (server_report.py).
SERVER_PARTS = ("queue_ms", "prefill_ms")


def new_race_id() -> str:
    return secrets.token_hex(6)


def race_order(targets: int, rounds: int) -> list[list[int]]:
    """The targets' turns, round by round: in order, then reversed, then in order again."""
    forward = list(range(targets))
    return [forward if r % 2 == 0 else forward[::-1] for r in range(rounds)]


def spread(values: Sequence[float]) -> dict[str, float | None]:
    """p50, p90, min and max (linear interpolation, numpy's default)."""
    from tui.engine.metrics.record import percentile

    return {
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "min": min(values) if values else None,
        "max": max(values) if values else None,
    }


@dataclass
class TargetResult(VariantResult):
    """One target's records; `label` as the race names it."""

    model: str = ""
    endpoint_host: str = ""

    def values(self, name: str) -> list[float]:
        return [float(v) for r in self.ok if (v := getattr(r, name)) is not None]

    def figures(self) -> dict[str, dict[str, float | None]]:
        return {name: spread(self.values(name)) for name, _ in FIGURES}

    def errors(self) -> dict[str, int]:
        """Failed requests by error kind (a cancelled one as "cancelled")."""
        kinds: dict[str, int] = {}
        for record in self.failures:
            kind = record.error_kind or record.status.value
            kinds[kind] = kinds.get(kind, 0) + 1
        return kinds

    def anatomy(self) -> dict[str, float]:
        """The median of each part of TTFT the server reported (none: empty)."""
        parts = {}
        for name in SERVER_PARTS:
            value = self.server_percentile(name, 50)
            if value is not None:
                parts[name] = value
        return parts


@dataclass(frozen=True)
class RaceVerdict:
    leader: str | None  # the target with the lowest median TTFT
    runner_up: str | None  # the one it is compared with
    comparison: Comparison | None
    summary: str  # one line a person reads

    @property
    def decided(self) -> bool:
        return self.comparison is not None and self.comparison.decided

    @property
    def faster(self) -> str | None:
        """The target that reaches its first token sooner, when the rounds decide it."""
        return self.leader if self.decided else None


def race_verdict(results: Sequence[TargetResult], confidence: float = CONFIDENCE) -> RaceVerdict:
    """The fastest target (lowest median TTFT) against the runner-up."""
    from tui.engine.metrics.record import percentile

    timed = [(r, r.values("ttft_ms")) for r in results]
    ranked = sorted(((r, v) for r, v in timed if v), key=lambda pair: percentile(pair[1], 50) or 0)
    if len(ranked) < 2:
        return RaceVerdict(None, None, None, "no verdict: fewer than two targets have a TTFT")
    (first, a), (second, b) = ranked[0], ranked[1]
    comparison = compare(a, b, confidence)
    level = f"{confidence:.0%}"
    if not comparison.decided:
        needed = fewest_to_decide(confidence)
        if min(len(a), len(b)) < needed:
            why = f"{needed} rounds a target are needed to decide at {level}"
        else:
            why = f"the {level} interval of the difference includes zero"
        return RaceVerdict(first.label, second.label, comparison, f"too close to call: {why}")
    low, high = comparison.low, comparison.high
    assert low is not None and high is not None  # decided
    ratio = comparison.ratio
    times = f", {ratio:.2f}× " if ratio is not None else " "
    summary = (
        f"{first.label} reaches its first token sooner than {second.label}: by "
        f"{-comparison.difference:,.0f} ms{times}(median {comparison.median_a:,.0f} vs "
        f"{comparison.median_b:,.0f} ms; {level} interval {-high:,.0f}–{-low:,.0f} ms, "
        f"Mann-Whitney p = {comparison.p_value:.3g})"
    )
    return RaceVerdict(first.label, second.label, comparison, summary)
