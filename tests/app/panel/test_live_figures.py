"""The panel's live figures come from the engine's receipt times, never from render times."""

from __future__ import annotations

import pytest
from helpers.app_pilot import make_app, send, wait_for, wait_ready

from tui.app.panel.live_figures import live_figures
from tui.demo import DemoThread
from tui.engine.metrics.record import RequestStatus
from tui.session.run_state import RunState


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


def test_a_pause_lasts_from_the_last_token_until_the_next_one() -> None:
    state = RunState(sent_at=100.0, started_at=100.0)
    state.first_token_at = state.first_answer_at = 100.2
    state.last_token_at = 100.5
    state.tokens = 6
    assert live_figures(state, now=101.0, streamed=True).paused_ms is None
    # The engine saw no token for chunk_timeout_ms since 100.5 (its Paused event at 101.3).
    state.paused_since, state.paused_at = 100.5, 101.3
    live = live_figures(state, now=101.7, streamed=True)
    assert live.paused_ms == pytest.approx(1200.0)  # "no token for 1.2 s…"
    state.last_token_at = 101.8  # the reply goes on: the pause is over
    assert live_figures(state, now=101.9, streamed=True).paused_ms is None


def test_time_to_first_answer_is_shown_only_after_reasoning() -> None:
    state = RunState(sent_at=100.0, started_at=100.0)
    state.first_token_at = 100.3  # a reasoning token
    state.tokens = 4
    thinking = live_figures(state, now=100.8, streamed=True)
    assert thinking.thinking and thinking.answer_ms is None
    state.first_answer_at = 101.5
    answered = live_figures(state, now=101.6, streamed=True)
    assert not answered.thinking and answered.answer_ms == pytest.approx(1500.0)
    plain = RunState(sent_at=100.0, started_at=100.0, first_token_at=100.3, first_answer_at=100.3)
    assert live_figures(plain, now=100.5, streamed=True).answer_ms is None  # = TTFT: not repeated


@pytest.mark.e2e
async def test_a_cancelled_replys_live_figures_and_its_record_agree(paced_demo: DemoThread) -> None:
    # No usage in a cancelled stream: the record counts the reply as the live figures did.
    app = make_app(paced_demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "hello, reply 2000 tokens")
        turn = app.chat_screen.turn
        assert turn is not None
        await wait_for(pilot, lambda: turn.current is not None and turn.current.state.tokens >= 100)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat_screen.busy, what="the cancelled reply")
        record = app.chat_screen.last_record
        assert record is not None and record.status is RequestStatus.CANCELLED
        state = turn.current.state  # type: ignore[union-attr]
        live = live_figures(state, now=state.last_token_at or 0.0, streamed=True)
        assert record.output_tokens == live.tokens
        tpot_ms, per_s = live.rates()
        assert record.tpot_ms == pytest.approx(tpot_ms)
        assert record.output_tokens_per_s == pytest.approx(per_s)
