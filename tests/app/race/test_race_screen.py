"""A race in the app, through Pilot against the demo endpoint: the race key races this chat
against a setting or a model, each lane streams its own reply under its own figures, the
scoreboard keeps the rounds, Esc cancels a round, and leaving goes back to the chat."""

from __future__ import annotations

import pytest
from helpers.app_pilot import make_app, send_and_wait, wait_for, wait_ready
from textual.pilot import Pilot

from tui.app.app import FirstTokenApp
from tui.app.race.race_screen import RaceScreen
from tui.app.race.start import against_this_chat
from tui.config import ConfigFlags, load_config
from tui.demo import DemoThread
from tui.race_targets import TargetError, parse_targets
from tui.session.chat_state import ChatState

pytestmark = pytest.mark.e2e


async def _race_screen(pilot: Pilot[None]) -> RaceScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, RaceScreen), what="the race screen")
    screen = app.screen
    assert isinstance(screen, RaceScreen)
    await wait_for(pilot, lambda: len(screen.views) == len(screen.race.lanes), what="its lanes")
    return screen


async def _round(pilot: Pilot[None], screen: RaceScreen, text: str) -> None:
    rounds = len(screen.scoreboard.rounds)
    await pilot.press(*text, "enter")
    await wait_for(pilot, lambda: len(screen.scoreboard.rounds) > rounds, what="the round")


async def test_the_race_key_races_this_chat_against_a_setting(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "before the race, reply 5 tokens")
        before = list(app.chat.state.messages)
        await pilot.press("f12")
        await pilot.pause(0.2)
        await pilot.press("enter")  # the dialog's suggestion: this chat with trim=off
        screen = await _race_screen(pilot)
        model = app.chat.state.model
        assert [lane.label for lane in screen.race.lanes] == [
            f"{model},trim=on",
            f"{model},trim=off",
        ]
        await _round(pilot, screen, "which is faster, reply 12 tokens")
        for lane, log in zip(screen.race.lanes, screen.logs, strict=True):
            # Each lane goes on with the chat's conversation and its own reply to the message.
            assert lane.chat.state.messages[: len(before)] == before
            assert [m["role"] for m in lane.chat.state.messages[len(before) :]] == [
                "user",
                "assistant",
            ]
            assert len(log.replies()) >= 1
            (record,) = lane.result.records
            assert record.race_id == screen.race.race_id and record.race_target == lane.label
        trims = [r.trim_enabled for lane in screen.race.lanes for r in lane.result.records]
        assert trims == [True, False]
        assert "round 1:" in str(screen.scoreboard.render())
        await pilot.press("f12")
        await wait_for(pilot, lambda: app.screen is app.chat_screen, what="back to the chat")
        assert app.chat.state.messages == before  # the race did not touch this chat


async def test_escape_cancels_the_round_keeping_what_arrived(slow_demo: DemoThread) -> None:
    app = make_app(slow_demo.base_url)
    targets = parse_targets(["demo-h100-70b", "demo-cpu-small"])
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_ready(pilot)
        app.start_race(targets, [], together=True)
        screen = await _race_screen(pilot)
        await pilot.press(*"a long one, reply 400 tokens", "enter")
        await wait_for(
            pilot,
            lambda: all(v.current is not None and v.current.state.tokens > 3 for v in screen.views),
            what="both lanes streaming",
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(screen.scoreboard.rounds) == 1, what="the round's end")
        statuses = [lane.result.records[0].status.value for lane in screen.race.lanes]
        assert statuses == ["cancelled", "cancelled"]
        for lane in screen.race.lanes:
            assert lane.chat.state.messages[-1]["role"] == "assistant"  # what arrived stays


async def test_a_race_at_start_opens_over_the_chat(demo: DemoThread) -> None:
    app = make_app(
        demo.base_url, race=(parse_targets(["demo-h100-70b", "demo-seed-qwen7b"]), False, True)
    )
    async with app.run_test(size=(200, 44)) as pilot:
        screen = await _race_screen(pilot)
        await _round(pilot, screen, "hello, reply 4 tokens")
        models = [r["model"] for r in demo.requests if r["path"].endswith("/chat/completions")]
        assert models[-2:] == ["demo-h100-70b", "demo-seed-qwen7b"]
        assert isinstance(app, FirstTokenApp)


def test_settings_alone_race_this_chats_model_changed() -> None:
    state = ChatState.from_config(load_config(ConfigFlags(), env={}))
    state.model, state.trim_enabled, state.streaming = "m", True, True
    assert [t.label for t in against_this_chat(state, "stream=off")] == [
        "m,stream=on",
        "m,stream=off",
    ]
    assert [t.label for t in against_this_chat(state, "other@http://h:1/v1")] == [
        "m",
        "other@http://h:1/v1",
    ]
    with pytest.raises(TargetError, match="is this chat as it is"):
        against_this_chat(state, "trim=on")
