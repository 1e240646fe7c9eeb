"""Which of two samples of times is smaller, by how much, and how sure the samples make that.

A race sends the same prompt to two targets a few times each; their TTFTs are two small
samples from skewed distributions with the odd outlier (a busy moment, a retry). So the
comparison makes no assumption of normality:

- the test is the Mann-Whitney U test (Wilcoxon rank-sum), with its exact distribution for
  samples up to EXACT_PAIRS pairs and the normal approximation (tie-corrected) beyond;
- the difference is the Hodges-Lehmann estimate (the median of every pairwise difference),
  with its distribution-free confidence interval from the same U distribution;
- the ratio is one sample's median over the other's.

Decided means the interval excludes zero at the given confidence. Fewer than four values a side
can never decide at 95 % (the smallest possible two-sided p for 3 + 3 is 0.1): the verdict then
says how many are needed instead of guessing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from tui.engine.metrics.record import percentile

EXACT_PAIRS = 400  # m * n up to this: the exact U distribution (20 rounds a side)
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Comparison:
    """`a` against `b`: negative differences mean `a` is smaller (faster)."""

    n_a: int
    n_b: int
    median_a: float
    median_b: float
    difference: float  # Hodges-Lehmann estimate of a - b
    low: float | None  # the confidence interval of a - b (None: too few values for one)
    high: float | None
    p_value: float  # two-sided, Mann-Whitney U
    method: str  # "exact" or "normal approximation"

    @property
    def decided(self) -> bool:
        """Whether the interval excludes zero: one of the two is smaller, at CONFIDENCE."""
        if self.low is None or self.high is None:
            return False
        return self.high < 0 or self.low > 0

    @property
    def ratio(self) -> float | None:
        """The larger median over the smaller (how many times slower the slower one is)."""
        small, large = sorted((self.median_a, self.median_b))
        return large / small if small > 0 else None


@lru_cache(maxsize=64)
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many orderings of m a's and n b's give each U (pairs with the a first), u = 0..m*n:
    the coefficients of the Gaussian binomial [m + n choose m]_q."""
    # counts[j][u]: orderings of i a's and j b's, built up one a at a time.
    counts = [[1] for _ in range(n + 1)]
    for i in range(1, m + 1):
        row: list[list[int]] = [[1]]
        for j in range(1, n + 1):
            # The largest item is a b (all i a's precede it: U + i) or an a (it precedes no b).
            without_b = row[j - 1]
            without_a = counts[j]
            size = i * j + 1
            merged = [0] * size
            for u, c in enumerate(without_a):
                merged[u] += c
            for u, c in enumerate(without_b):
                merged[u + i] += c
            row.append(merged)
        counts = row
    return tuple(counts[n])


def _u_statistic(a: Sequence[float], b: Sequence[float]) -> float:
    """Pairs with the a value smaller, ties counting one half."""
    u = 0.0
    for x in a:
        for y in b:
            if x < y:
                u += 1.0
            elif x == y:
                u += 0.5
    return u


def _exact_p(u: float, m: int, n: int) -> float:
    counts = _u_counts(m, n)
    total = sum(counts)
    low = sum(counts[: math.floor(u) + 1]) / total
    high = sum(counts[math.ceil(u) :]) / total
    return min(1.0, 2.0 * min(low, high))


def _normal_p(u: float, a: Sequence[float], b: Sequence[float]) -> float:
    m, n = len(a), len(b)
    values = [*a, *b]
    ties = sum(c**3 - c for c in (values.count(v) for v in set(values)))
    variance = m * n / 12.0 * ((m + n + 1) - ties / ((m + n) * (m + n - 1)))
    if variance <= 0:
        return 1.0
    z = (abs(u - m * n / 2.0) - 0.5) / math.sqrt(variance)
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2.0)))


def _interval_rank(m: int, n: int, confidence: float) -> int:
    """k for the interval [D(k), D(mn + 1 - k)] of the sorted pairwise differences: the
    largest k with P(U < k) <= (1 - confidence) / 2; 0 when no interval reaches it."""
    alpha = (1.0 - confidence) / 2.0
    if m * n <= EXACT_PAIRS:
        counts = _u_counts(m, n)
        total = sum(counts)
        below, k = 0, 0
        while k < len(counts) and (below + counts[k]) / total <= alpha:
            below += counts[k]
            k += 1
        return k
    z = _inverse_normal(1.0 - alpha)
    k = math.floor(m * n / 2.0 - z * math.sqrt(m * n * (m + n + 1) / 12.0))
    return max(k, 0)


def _inverse_normal(p: float) -> float:
    """The standard normal quantile (bisection on erfc: exact enough for an interval's rank)."""
    low, high = 0.0, 10.0
    for _ in range(80):
        middle = (low + high) / 2.0
        if 0.5 * math.erfc(middle / math.sqrt(2.0)) > 1.0 - p:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


def compare(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE) -> Comparison:
    """`a` against `b` (each non-empty)."""
    if not a or not b:
        raise ValueError("compare needs at least one value on each side")
    m, n = len(a), len(b)
    u = _u_statistic(a, b)
    exact = m * n <= EXACT_PAIRS
    p = _exact_p(u, m, n) if exact else _normal_p(u, a, b)
    differences = sorted(x - y for x in a for y in b)
    estimate = percentile(differences, 50)
    assert estimate is not None
    k = _interval_rank(m, n, confidence)
    low = high = None
    if k >= 1:
        low, high = float(differences[k - 1]), float(differences[m * n - k])
    median_a, median_b = percentile(a, 50), percentile(b, 50)
    assert median_a is not None and median_b is not None
    return Comparison(
        n_a=m,
        n_b=n,
        median_a=median_a,
        median_b=median_b,
        difference=float(estimate),
        low=low,
        high=high,
        p_value=p,
        method="exact" if exact else "normal approximation",
    )


def fewest_to_decide(confidence: float = CONFIDENCE) -> int:
    """The fewest values a side (equal sides) with which a comparison can decide at all."""
    n = 1
    while _interval_rank(n, n, confidence) < 1:
        n += 1
    return n
