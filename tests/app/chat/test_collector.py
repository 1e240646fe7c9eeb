"""The collector pause: streaming thresholds while paused, the caller's own ones after."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from tui.app.chat.collector import STREAMING_THRESHOLDS, CollectorPause


@pytest.fixture
def custom_thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.set_threshold(1234, 11, 12)
    try:
        yield (1234, 11, 12)
    finally:
        gc.set_threshold(*saved)


def test_pause_defers_full_collections_and_resume_restores(custom_thresholds) -> None:
    pause = CollectorPause()
    pause.pause()
    assert pause.paused
    assert gc.get_threshold() == STREAMING_THRESHOLDS
    assert STREAMING_THRESHOLDS[2] > 10_000  # generation 2 effectively never runs
    pause.resume()
    assert not pause.paused
    assert gc.get_threshold() == custom_thresholds


def test_pause_and_resume_are_idempotent(custom_thresholds) -> None:
    pause = CollectorPause()
    pause.pause()
    pause.pause()  # a second pause must not save the streaming thresholds as "the user's"
    pause.resume()
    pause.resume()
    assert gc.get_threshold() == custom_thresholds


def test_replies_streaming_at_once_share_the_pause(custom_thresholds) -> None:
    """A race's lanes: the first to end must not restore the thresholds under the other, and
    the last to end restores the user's own (not the streaming ones it saw when it began)."""
    first, second = CollectorPause(), CollectorPause()
    first.pause()
    second.pause()
    first.resume()
    assert gc.get_threshold() == STREAMING_THRESHOLDS
    second.resume()
    assert gc.get_threshold() == custom_thresholds


@pytest.mark.e2e
async def test_the_app_turns_collection_back_on_after_its_warm_up(demo) -> None:
    # `firsttoken` (open_app) switches the collector off for start-up; the app's warm-up must
    # switch it back on, or a long-running app would never collect a reference cycle.
    from helpers.app_pilot import make_app, wait_for

    app = make_app(demo.base_url)
    gc.disable()
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: app.chat.engine.connected, what="the warm-up")
            await wait_for(pilot, gc.isenabled, timeout=5, what="the collector back on")
    finally:
        gc.enable()
