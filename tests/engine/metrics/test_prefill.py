"""llama.cpp's prompt progress read into samples, and what is worked out from them."""

from __future__ import annotations

import pytest

from tui.engine.metrics.prefill import (
    KEPT_SAMPLES,
    PrefillSample,
    first_token_eta_s,
    keep_sample,
    prefill_rate,
    prefill_sample,
    progress_words,
)


def test_a_progress_object_becomes_a_sample() -> None:
    progress = {"total": 1840, "cache": 40, "processed": 552, "time_ms": 640.5}
    assert prefill_sample(progress, 2.0) == PrefillSample(2.0, 1840, 40, 552, 640.5)


@pytest.mark.parametrize(
    "progress",
    [
        None,
        "50%",
        {"total": 10},
        {"total": 10, "processed": 11},  # past the total
        {"total": True, "processed": 1},
        {"total": 10, "processed": -1},
        {"total": 10.0, "processed": 5},
    ],
)
def test_what_is_not_a_progress_object_is_no_sample(progress: object) -> None:
    assert prefill_sample(progress, 1.0) is None


def test_a_bad_time_or_cache_is_left_out_not_guessed() -> None:
    sample = prefill_sample({"total": 10, "processed": 5, "cache": 99, "time_ms": "x"}, 0.0)
    assert sample is not None and sample.server_ms is None and sample.cached == 10


def test_the_rate_is_the_servers_computed_tokens_over_its_own_time() -> None:
    samples = [
        PrefillSample(0.0, 3000, 1000, 1000, 0.0),
        PrefillSample(0.9, 3000, 1000, 2024, 1024.0),
    ]
    # 1,024 tokens computed (the 1,000 cached ones excluded) in the server's 1.024 s.
    assert prefill_rate(samples) == pytest.approx(1000.0)
    assert first_token_eta_s(samples[-1], 1000.0) == pytest.approx(0.976)


def test_without_the_servers_time_the_rate_is_taken_between_arrivals() -> None:
    samples = [PrefillSample(1.0, 3000, 0, 0, None), PrefillSample(3.0, 3000, 0, 1000, None)]
    assert prefill_rate(samples) == pytest.approx(500.0)
    assert prefill_rate(samples[:1]) is None and prefill_rate([]) is None


def test_a_server_clock_at_zero_gives_no_rate_whatever_the_arrivals() -> None:
    # A server that computed the prompt in no time by its own clock: arrival gaps are the
    # network's, so they must not pass for a prefill rate.
    samples = [PrefillSample(1.0, 300, 0, 100, 0.0), PrefillSample(1.0001, 300, 0, 300, 0.0)]
    assert prefill_rate(samples) is None


def test_the_record_keeps_the_first_samples_and_the_latest() -> None:
    kept: list[PrefillSample] = []
    for n in range(100):
        keep_sample(kept, PrefillSample(float(n), 100, 0, n, None))
    assert len(kept) == KEPT_SAMPLES
    assert [s.processed for s in kept[:3]] == [0, 1, 2] and kept[-1].processed == 99


def test_the_words_say_how_far_the_rate_and_the_eta_counted_down() -> None:
    sample = PrefillSample(10.0, 7367, 512, 2048, 2048.0)
    rate = prefill_rate([sample])
    words = progress_words(sample, rate, now=11.0)
    assert words == (
        "prefill 2,048 of 7,367 tokens (28%) · 512 cached · 750 tok/s · first token in ~6.1 s"
    )
    assert progress_words(PrefillSample(0.0, 10, 0, 0, None), None) == (
        "prefill 0 of 10 tokens (0%)"
    )
