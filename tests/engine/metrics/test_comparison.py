"""The race's statistics against reference computations: the Mann-Whitney U distribution by
enumerating every ordering, the Hodges-Lehmann estimate and its interval from every pairwise
difference, the normal approximation near the exact one where both apply."""

from __future__ import annotations

import itertools
import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.engine.metrics.comparison import (
    EXACT_PAIRS,
    _normal_p,
    _u_counts,
    _u_statistic,
    compare,
    fewest_to_decide,
)


def _enumerated_counts(m: int, n: int) -> list[int]:
    """U for every way of choosing which m of the m + n ranks are a's."""
    counts = [0] * (m * n + 1)
    for a_ranks in itertools.combinations(range(m + n), m):
        b_ranks = [r for r in range(m + n) if r not in a_ranks]
        counts[sum(1 for a in a_ranks for b in b_ranks if a < b)] += 1
    return counts


@pytest.mark.parametrize(("m", "n"), [(1, 1), (2, 3), (3, 3), (4, 5), (5, 5), (6, 4)])
def test_the_u_distribution_is_every_ordering_counted(m: int, n: int) -> None:
    assert list(_u_counts(m, n)) == _enumerated_counts(m, n)
    assert sum(_u_counts(m, n)) == math.comb(m + n, m)


def test_five_against_five_all_faster_is_p_2_over_252() -> None:
    result = compare([10, 11, 12, 13, 14], [20, 21, 22, 23, 24])
    assert result.p_value == pytest.approx(2 / 252)
    assert result.decided and result.difference == -10.0
    assert (
        result.median_a == 12 and result.median_b == 22 and result.ratio == pytest.approx(22 / 12)
    )


def test_three_a_side_can_never_decide_at_95_percent() -> None:
    result = compare([1, 2, 3], [100, 200, 300])
    assert result.p_value == pytest.approx(0.1)
    assert (result.low, result.high) == (None, None) and not result.decided
    assert fewest_to_decide() == 4


def _reference_interval(a: list[float], b: list[float]) -> tuple[float, float] | None:
    """The interval by definition: the k-th smallest and largest pairwise differences, k the
    largest count with P(U < k) <= 2.5 %, from the enumerated distribution."""
    counts = _enumerated_counts(len(a), len(b))
    total = sum(counts)
    k = 0
    while sum(counts[: k + 1]) / total <= 0.025:
        k += 1
    if k == 0:
        return None
    differences = sorted(x - y for x in a for y in b)
    return differences[k - 1], differences[-k]


samples = st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(a=samples, b=samples)
def test_estimate_and_interval_match_their_definitions(a: list[int], b: list[int]) -> None:
    result = compare(a, b)
    differences = [x - y for x in a for y in b]
    assert result.difference == statistics.median(differences)
    reference = _reference_interval(a, b)
    got = None if result.low is None else (result.low, result.high)
    assert got == reference
    assert 0.0 <= result.p_value <= 1.0


@settings(max_examples=60, deadline=None)
@given(
    a=st.lists(st.floats(min_value=1, max_value=1e4), min_size=12, max_size=20, unique=True),
    b=st.lists(st.floats(min_value=1, max_value=1e4), min_size=12, max_size=20, unique=True),
)
def test_the_normal_approximation_is_near_the_exact_p_where_both_apply(
    a: list[float], b: list[float]
) -> None:
    if set(a) & set(b):
        return  # the exact distribution assumes no ties
    assert len(a) * len(b) <= EXACT_PAIRS
    exact = compare(a, b).p_value
    approximate = _normal_p(_u_statistic(a, b), a, b)
    assert approximate == pytest.approx(exact, abs=0.02)


def test_large_samples_use_the_normal_approximation() -> None:
    fast = [100.0 + i for i in range(30)]
    slow = [130.0 + i for i in range(30)]
    result = compare(fast, slow)
    assert result.method == "normal approximation" and result.decided
    assert result.low is not None and result.high is not None and result.low <= -30 <= result.high
