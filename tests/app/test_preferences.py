"""Remembered preferences and the prompt history: round trips, corrupt files, recall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.app_pilot import WidgetsInApp

from tui import locations
from tui.app.chat.prompt_input import PromptInput
from tui.app.preferences import Preferences, PromptHistory


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FIRSTTOKEN_HOME", str(tmp_path))
    return tmp_path


def test_preferences_round_trip() -> None:
    assert Preferences.load() == Preferences()
    models = {"demo": "m1", "https://api.example.com/v1": "m2"}
    side_panel = {"narrow": True, "wide": False}
    Preferences(theme="firsttoken-light", side_panel=side_panel, models=models).save()
    assert Preferences.default_path().parent == locations.state_dir()
    loaded = Preferences.load()
    assert loaded == Preferences("firsttoken-light", side_panel, models)
    assert loaded.model_for("demo") == "m1" and loaded.model_for("elsewhere") is None
    assert list(locations.state_dir().iterdir()) == [Preferences.default_path()]  # no tmp left


@pytest.mark.parametrize(
    "content", ["{not json", "[1, 2]", '{"theme": 5, "side_panel": {"wide": "yes"}}', ""]
)
def test_corrupt_preferences_start_fresh(content: str) -> None:
    path = Preferences.default_path()
    path.parent.mkdir(parents=True)
    path.write_text(content)
    assert Preferences.load() == Preferences()
    Preferences(theme="x").save()
    assert Preferences.load().theme == "x"


def test_the_panel_choice_of_unknown_width_is_not_carried_over(tmp_path: Path) -> None:
    # Saved before the choice was kept per width class: it may have been made at 80 columns.
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"side_panel_collapsed": True}))
    assert Preferences.load(path).side_panel == {}


def test_preferences_ignore_unknown_keys(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"theme": "nord", "future_key": 1}))
    assert Preferences.load(path) == Preferences(theme="nord")


async def test_the_prompt_recalls_older_and_newer_prompts_and_the_draft() -> None:
    prompt = PromptInput(history=["one", "two", "three"], id="prompt")
    app = WidgetsInApp(prompt)
    async with app.run_test() as pilot:
        prompt.focus()
        await pilot.press(*"my draft")
        shown = []
        for key in ["up"] * 4 + ["down"] * 4:
            await pilot.press(key)
            shown.append(prompt.text)
    # The oldest stays (the key is swallowed); past the newest the draft comes back.
    assert shown == ["three", "two", "one", "one", "two", "three", "my draft", "my draft"]


def test_history_dedupes_consecutive_skips_blank_and_persists(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    history = PromptHistory(path)
    for prompt in ["a", "a", "b", "  ", "a", "multi\nline"]:
        history.append(prompt)
    assert history.entries == ["a", "b", "a", "multi\nline"]
    assert PromptHistory(path).entries == ["a", "b", "a", "multi\nline"]


def test_history_is_capped(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    history = PromptHistory(path, limit=5)
    for number in range(12):
        history.append(f"p{number}")
    assert history.entries == [f"p{n}" for n in range(7, 12)]
    assert len(path.read_text().splitlines()) == 5
    assert PromptHistory(path, limit=3).entries == ["p9", "p10", "p11"]


def test_history_survives_corrupt_lines_and_files(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text('{"prompt": "good"}\n{broken\n42\n{"prompt": 7}\n{"prompt": "also good"}\n')
    assert PromptHistory(path).entries == ["good", "also good"]
    path.write_bytes(b"\xff\xfe\x00garbage")
    history = PromptHistory(path)
    assert history.entries == []
    history.append("fresh")
    assert PromptHistory(path).entries == ["fresh"]


def test_history_default_path_is_in_state_dir() -> None:
    history = PromptHistory()
    history.append("hello")
    assert history.path.parent == locations.state_dir()
    assert history.path.exists()
