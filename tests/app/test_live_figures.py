"""The panel's live figures come from the engine's receipt times, never from render times."""

from __future__ import annotations

import pytest

from tui.app.live_figures import live_figures
from tui.app.request_runner import RunState


def test_waiting_counts_from_the_hand_over_until_the_engine_reports_its_start() -> None:
    state = RunState(sent_at=100.0)
    live = live_figures(state, now=100.25, streamed=True)
    assert live.elapsed_ms == pytest.approx(250.0)
    assert live.ttft_ms is None and live.ttfb_ms is None
    assert live.tokens == 0 and live.decode_s == 0.0


def test_ttft_and_ttfb_count_from_the_first_attempt_with_retries_inside() -> None:
    state = RunState(sent_at=100.0, started_at=100.002, retries=1)
    state.first_byte_at = 100.302
    state.first_token_at = 100.402
    state.last_token_at = 101.402
    state.tokens = 51
    live = live_figures(state, now=101.5, streamed=False)
    assert live.ttfb_ms == pytest.approx(300.0)
    assert live.ttft_ms == pytest.approx(400.0)
    assert live.decode_s == pytest.approx(1.0)  # first -> latest token, as received
    assert live.elapsed_ms == pytest.approx(1498.0)
    assert (live.tokens, live.retries, live.streamed) == (51, 1, False)
