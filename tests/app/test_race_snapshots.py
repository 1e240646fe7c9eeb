"""SVG snapshots of a race after two rounds, at 120 and at 200 columns (regenerate with
`pytest --snapshot-update`). Figures are fixed as in test_app_snapshots (its fixtures are used
here), each target with TTFTs of its own, the lanes' endpoint a fixed host, the rounds warm
(a cold request's tag is random)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from helpers.app_pilot import make_app, wait_for
from test_app_snapshots import fixed_figures, settle, warm_imports

from tui.app.race.race_screen import RaceScreen
from tui.demo import DemoThread
from tui.race_targets import parse_targets
from tui.session.turn import Turn

pytestmark = pytest.mark.e2e

__all__ = ["fixed_figures", "warm_imports"]  # the fixtures apply here too

FAST, SLOW = "demo-h100-70b", "demo-cpu-small"
TTFT_BY_MODEL = {FAST: [96.0, 104.0], SLOW: [612.0, 588.0]}


@pytest.fixture(autouse=True)
def fixed_lanes(monkeypatch: pytest.MonkeyPatch, fixed_figures: None) -> None:
    """Each lane's TTFTs its own (on top of the fixed figures), a fixed endpoint."""
    outcome = Turn.outcome  # already fixed by `fixed_figures`
    sent: dict[str, int] = {}

    async def lane_outcome(turn: Turn) -> Any:
        finished = await outcome(turn)
        model = finished.record.model
        ttfts = TTFT_BY_MODEL.get(model)
        if ttfts is None:
            return finished
        index = sent.get(model, 0) % len(ttfts)
        sent[model] = index + 1
        record = dataclasses.replace(finished.record, ttft_ms=ttfts[index])
        return dataclasses.replace(finished, record=record)

    monkeypatch.setattr(Turn, "outcome", lane_outcome)
    monkeypatch.setattr(
        RaceScreen,
        "_where",
        staticmethod(lambda lane: f"{lane.chat.state.model} @ demo.local:8000"),
    )


def _race_app(demo: DemoThread) -> Any:
    # Warm: a cold request's tag is random, and so would the prompt's token count be.
    return make_app(demo.base_url, race=(parse_targets([FAST, SLOW]), False, False))


async def _two_rounds(pilot: Any) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, RaceScreen), what="the race screen")
    screen = app.screen
    for n, text in enumerate(("Which of you is faster? reply 20 tokens", "Again, reply 20 tokens")):
        await pilot.press(*text, "enter")
        await wait_for(pilot, lambda n=n: len(screen.scoreboard.rounds) == n + 1, what="a round")
    app.clear_notifications()
    await settle_race(pilot)


async def settle_race(pilot: Any) -> None:
    """As `settle`, for the race's own prompt."""
    app = pilot.app
    app.app_focus = True
    prompt = app.screen.query_one("#race-prompt")
    prompt.focus()
    prompt.set_blinking(False)
    await pilot.pause(0.2)
    await pilot.wait_for_scheduled_animations()


assert settle is not None  # the chat's own is used by the fixtures' module


def test_race_two_lanes_120_columns(snap_compare, demo: DemoThread):
    assert snap_compare(_race_app(demo), terminal_size=(120, 40), run_before=_two_rounds)


def test_race_two_lanes_200_columns(snap_compare, demo: DemoThread):
    assert snap_compare(_race_app(demo), terminal_size=(200, 44), run_before=_two_rounds)
