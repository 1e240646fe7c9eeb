"""The model belongs to the endpoint, against two demo endpoints on different ports: a model
picked with F2 is remembered for the endpoint it was picked on; another endpoint starts with
its own remembered model or the configured one; a reopened chat goes on with its own model;
a remembered or reopened model the endpoint does not list is not used silently."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.app_pilot import firsttoken_app, make_app, replies, send_and_wait, wait_for, wait_ready
from test_chat_keys import notes_of

from tui.app.app import FirstTokenApp
from tui.app.chat.model_choice import DEMO_ENDPOINT, endpoint_key
from tui.app.preferences import Preferences
from tui.app.screens.model_picker import ModelPicker
from tui.config import Config, ConfigFlags, load_config
from tui.demo import DemoThread, start_demo_in_thread
from tui.demo.latency_model import latency_model
from tui.engine.store.database import Store
from tui.wiring import Endpoint

PICKED = "firsttoken-demo-reasoning"


@pytest.fixture
def other_demo() -> Iterator[DemoThread]:
    """A second endpoint, on a port of its own (and a preset of its own: its list differs)."""
    thread = start_demo_in_thread(latency_model("instant", {"decode_tokens_per_s": 100_001.0}))
    try:
        yield thread
    finally:
        thread.stop()


def remembering_app(base_url: str, **options: Any) -> FirstTokenApp:
    """The app against `base_url` that remembers its preferences (in the test's home)."""
    config = load_config(ConfigFlags(base_url=base_url), env={})
    endpoint = Endpoint(base_url=base_url, api_key="demo", simulated=True)
    return firsttoken_app(config, endpoint, remember=True, **options)


async def settled(pilot: Any) -> None:
    await wait_ready(pilot)
    await wait_for(pilot, lambda: pilot.app.start_up.settled, what="start-up settled")
    await pilot.pause()


def test_the_endpoint_key() -> None:
    assert endpoint_key(Config()) == DEMO_ENDPOINT  # the embedded demo, whatever its port
    url = Config(base_url="https://api.example.com/v1/")
    assert endpoint_key(url) == "https://api.example.com/v1"


def test_corrupt_model_entries_cost_only_themselves(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"models": {"a": 1, "b": "m", "c": ""}, "last_model": "old"}')
    assert Preferences.load(path).models == {"b": "m"}
    path.write_text('{"models": ["a"]}')
    assert Preferences.load(path).models == {}


@pytest.mark.e2e
async def test_a_picked_model_is_remembered_for_its_endpoint_only(
    demo: DemoThread, other_demo: DemoThread
) -> None:
    configured = Config().model
    first = remembering_app(demo.base_url)
    async with first.run_test(size=(120, 36)) as pilot:
        await settled(pilot)
        assert first.chat.state.model == configured
        await pilot.press("f2")
        assert isinstance(first.screen, ModelPicker)
        first.screen.dismiss(PICKED)
        await wait_for(pilot, lambda: first.chat.state.model == PICKED, what="the pick")
    assert Preferences.load().models == {demo.base_url.rstrip("/"): PICKED}

    elsewhere = remembering_app(other_demo.base_url)
    async with elsewhere.run_test(size=(120, 36)) as pilot:
        await settled(pilot)
        assert elsewhere.chat.state.model == configured
        assert elsewhere.sub_title.removeprefix("simulated · ").startswith(configured)
        await send_and_wait(pilot, "which model, reply 5 tokens")
        assert other_demo.requests[-1]["model"] == configured

    again = remembering_app(demo.base_url)
    async with again.run_test(size=(120, 36)) as pilot:
        await settled(pilot)
        assert again.chat.state.model == PICKED
        await send_and_wait(pilot, "which model, reply 5 tokens")
        assert demo.requests[-1]["model"] == PICKED


@pytest.mark.e2e
async def test_a_remembered_model_the_endpoint_does_not_list_is_not_used_silently(
    other_demo: DemoThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = other_demo.base_url.rstrip("/")
    Preferences(models={key: "model-of-another-server"}).save()  # not one this demo lists
    app = remembering_app(other_demo.base_url)
    said = notes_of(app, monkeypatch)
    async with app.run_test(size=(120, 36)) as pilot:
        await settled(pilot)
        configured = app.config.model
        assert app.chat.state.model == configured
        assert any(
            "model-of-another-server" in note and "not among the models" in note for note in said
        )
        assert Preferences.load().model_for(key) is None
        await send_and_wait(pilot, "which model, reply 5 tokens")
        assert other_demo.requests[-1]["model"] == configured


@pytest.mark.e2e
async def test_a_reopened_chat_goes_on_with_its_own_model(
    demo: DemoThread, other_demo: DemoThread, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store(tmp_path / "history.sqlite3") as store:
        made = make_app(demo.base_url, store=store, model=PICKED)
        async with made.run_test(size=(120, 36)) as pilot:
            await wait_ready(pilot)
            await send_and_wait(pilot, "hello, reply 5 tokens")
            chat_id = made.chat.state.chat_id
            await send_and_wait(pilot, "a model of this endpoint only, reply 5 tokens")
            assert made.chat.state.model == PICKED
        assert chat_id is not None

        resumed = make_app(demo.base_url, store=store, resume_chat=chat_id)
        assert resumed.chat.state.model != PICKED  # the configured model, until the chat opens
        async with resumed.run_test(size=(120, 36)) as pilot:
            await settled(pilot)
            await wait_for(pilot, lambda: len(replies(resumed)) == 2, what="the chat reopened")
            assert resumed.chat.state.model == PICKED
            assert resumed.sub_title.removeprefix("simulated · ").startswith(PICKED)
            await send_and_wait(pilot, "and now, reply 5 tokens")
            assert demo.requests[-1]["model"] == PICKED

        # The same chat on an endpoint that lists its model too: kept. A chat whose model
        # this endpoint does not list: said, and the configured model is used.
        with_custom = make_app(demo.base_url, store=store, model="my-own-name")
        async with with_custom.run_test(size=(120, 36)) as pilot:
            await wait_ready(pilot)
            await send_and_wait(pilot, "a name only this chat uses, reply 5 tokens")
            custom_chat = with_custom.chat.state.chat_id
        assert custom_chat is not None
        elsewhere = make_app(other_demo.base_url, store=store, resume_chat=custom_chat)
        said = notes_of(elsewhere, monkeypatch)
        async with elsewhere.run_test(size=(120, 36)) as pilot:
            await settled(pilot)
            await wait_for(pilot, lambda: len(replies(elsewhere)) == 1, what="the chat reopened")
            await wait_for(
                pilot,
                lambda: any("my-own-name" in note for note in said),
                what="the notice",
            )
            assert elsewhere.chat.state.model == elsewhere.config.model
            assert any("this chat's model" in note for note in said)
