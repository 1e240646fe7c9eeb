"""A race's order and its verdict, from records with known TTFTs."""

from __future__ import annotations

from tui.engine.metrics.record import RequestRecord, RequestStatus
from tui.engine.race import TargetResult, race_order, race_verdict


def _target(label: str, ttfts: list[float], failed: int = 0) -> TargetResult:
    records = [
        RequestRecord(model=label, endpoint_host="h", streamed=True, ttft_ms=t) for t in ttfts
    ]
    records += [
        RequestRecord(
            model=label, endpoint_host="h", streamed=True, status=RequestStatus.ERROR,
            error_kind="rate_limited",
        )
        for _ in range(failed)
    ]  # fmt: skip
    return TargetResult(label, records, model=label, endpoint_host="h")


def test_the_order_reverses_every_other_round() -> None:
    assert race_order(2, 4) == [[0, 1], [1, 0], [0, 1], [1, 0]]
    assert race_order(3, 2) == [[0, 1, 2], [2, 1, 0]]


def test_a_clear_winner_is_named_with_its_margin_and_ratio() -> None:
    fast = _target("fast", [100, 104, 98, 101, 99])
    slow = _target("slow", [300, 310, 295, 305, 290], failed=1)
    verdict = race_verdict([slow, fast])
    assert verdict.faster == "fast" and verdict.runner_up == "slow" and verdict.decided
    assert verdict.comparison is not None and verdict.comparison.difference == -200.0
    assert "fast reaches its first token sooner than slow: by 200 ms, 3.00×" in verdict.summary
    assert slow.errors() == {"rate_limited": 1}
    assert slow.figures()["ttft_ms"] == {"p50": 300.0, "p90": 308.0, "min": 290.0, "max": 310.0}


def test_overlapping_targets_are_too_close_to_call() -> None:
    a = _target("a", [100, 150, 105, 160, 102])
    b = _target("b", [101, 149, 106, 155, 103])
    verdict = race_verdict([a, b])
    assert verdict.faster is None and not verdict.decided and verdict.leader == "a"
    assert verdict.summary.startswith("too close to call: the 95% interval")


def test_too_few_rounds_say_how_many_are_needed() -> None:
    verdict = race_verdict([_target("a", [1, 2, 3]), _target("b", [100, 200, 300])])
    assert verdict.faster is None
    assert "4 rounds a target are needed" in verdict.summary


def test_the_fastest_of_three_is_compared_with_the_runner_up() -> None:
    results = [
        _target("mid", [200, 201, 202, 203]),
        _target("slowest", [900, 901, 902, 903]),
        _target("fastest", [100, 101, 102, 103]),
    ]
    verdict = race_verdict(results)
    assert (verdict.faster, verdict.runner_up) == ("fastest", "mid")


def test_no_verdict_without_two_timed_targets() -> None:
    verdict = race_verdict([_target("a", [100, 101]), _target("b", [], failed=2)])
    assert verdict.leader is None and "fewer than two targets" in verdict.summary
