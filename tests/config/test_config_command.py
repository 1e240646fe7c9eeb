"""`firsttoken config`, `firsttoken config init`, the example files and mask_secret."""

from __future__ import annotations

import argparse
import io
import json
import shutil
from pathlib import Path

import pytest
from helpers.cli import firsttoken
from hypothesis import given
from hypothesis import strategies as st

from tui import locations
from tui.commands import show_config
from tui.config import NO_KEY, ConfigFlags, load_config, mask_secret
from tui.config_examples import CONFIG_EXAMPLE_TOML, SETTINGS_EXAMPLE_JSON
from tui.engine.text.redact import HIDDEN

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


def run(action: str | None = None, flags: ConfigFlags | None = None) -> int:
    return show_config.run(argparse.Namespace(config_action=action), flags or ConfigFlags())


# --- the example files ------------------------------------------------------------------------


def test_top_level_examples_equal_the_embedded_constants() -> None:
    assert (ROOT / "config.example.toml").read_bytes() == CONFIG_EXAMPLE_TOML.encode("utf-8")
    assert (ROOT / "settings.example.json").read_bytes() == SETTINGS_EXAMPLE_JSON.encode("utf-8")


def test_example_settings_document_every_key() -> None:
    data = json.loads(SETTINGS_EXAMPLE_JSON)
    for section, keys in data.items():
        if section.startswith("//"):
            continue
        for key in keys:
            if not key.startswith("//"):
                assert f"//{key}" in keys, f"{section}.{key} has no // comment"


def test_example_config_mentions_every_optional_addition() -> None:
    for key in (
        "models",
        "context_window",
        "max_retries",
        "request_classes",
        "preset",
        "prefill_ms_per_token",
        "decode_tokens_per_s",
        "rtt_ms",
        "queue_ms",
        "jitter_ms",
        "reply_tokens",
        "provider",
        "api_key_header",
        "extra_headers",
        "extra_query",
        "HTTPS_PROXY",
        "NO_PROXY",
    ):
        assert key in CONFIG_EXAMPLE_TOML


# --- config init --------------------------------------------------------------------------------


def test_init_writes_both_files_then_never_overwrites(capsys: pytest.CaptureFixture[str]) -> None:
    folder = locations.config_dir()
    assert run("init") == 0
    out = capsys.readouterr().out
    assert f"wrote   {folder / 'config.toml'}" in out
    assert (folder / "config.toml").read_text(encoding="utf-8") == CONFIG_EXAMPLE_TOML
    assert (folder / "settings.json").read_text(encoding="utf-8") == SETTINGS_EXAMPLE_JSON

    (folder / "config.toml").write_text('[llm]\nmodel = "mine"\n', encoding="utf-8")
    (folder / "settings.json").unlink()
    assert run("init") == 0
    out = capsys.readouterr().out
    assert f"skipped {folder / 'config.toml'} (it already exists" in out
    assert f"wrote   {folder / 'settings.json'}" in out
    assert (folder / "config.toml").read_text(encoding="utf-8") == '[llm]\nmodel = "mine"\n'


def test_init_output_loads_cleanly_and_uses_the_demo(tmp_path: Path) -> None:
    assert run("init") == 0
    config = load_config(ConfigFlags(), env={}, cwd=tmp_path)
    assert config.config_path == locations.config_dir() / "config.toml"
    assert config.settings_path == locations.config_dir() / "settings.json"
    assert config.warnings == ()
    assert config.uses_demo_endpoint


@pytest.mark.e2e
def test_init_leaves_the_model_to_the_endpoint(isolated_home: Path) -> None:
    """The article's model is not one the demo endpoint (or most endpoints) lists: the written
    file leaves the model unset, with a comment."""
    assert firsttoken("config", "init").returncode == 0
    shown = firsttoken("config")
    (model,) = [line.split() for line in shown.stdout.splitlines() if line.startswith("  model ")]
    assert model == ["model", "gpt-4o-mini", "default"]
    assert '# model = "qwen-7b-chat"' in CONFIG_EXAMPLE_TOML


def test_init_reports_an_unwritable_folder(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert show_config.init(blocker / "sub", out, err) == 2
    assert err.getvalue().startswith("firsttoken: error: cannot create")
    assert err.getvalue().count("\n") == 1


# --- firsttoken config --------------------------------------------------------------------------


def test_report_shows_values_origins_masked_key_and_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURES / "design_config.toml", tmp_path / "config.toml")
    (tmp_path / "settings.json").write_text('{"promptTrimmer": {"defaultBudget": 4000}}')
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-verysecretvalue1234abcd")
    assert run(flags=ConfigFlags(model="flag-model")) == 0
    out = capsys.readouterr().out
    assert "verysecret" not in out
    lines = out.splitlines()

    def row(name: str) -> list[str]:
        (line,) = [line for line in lines if line.startswith(f"  {name} ")]
        return line.split()

    assert row("api_key") == ["api_key", "sk-…abcd", "env:OPENAI_API_KEY"]
    assert row("model") == ["model", "flag-model", "flag"]
    assert row("token_budget") == [
        "token_budget",
        "4000",
        "settings.json:promptTrimmer.defaultBudget",
    ]
    assert row("max_retries") == ["max_retries", "2", "default"]
    assert row("base_url") == ["base_url", "https://api.example.com/v1", "config.toml:llm.base_url"]
    assert row("streaming") == ["streaming", "true", "config.toml:llm.streaming.enabled"]
    # Aligned: every origin starts in the same column.
    columns = {
        line.rindex(" ")
        for line in lines
        if line.startswith("  ")
        and "/" not in line
        and line.split()[0] in {"model", "streaming", "token_budget", "max_retries"}
    }
    assert len(columns) == 1
    assert f"  found  {tmp_path / 'config.toml'}" in lines
    assert f"  found  {tmp_path / 'settings.json'}" in lines


def test_report_without_key_names_the_demo_and_lists_misses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "settings.json").write_text('{"promptTrimer": {}}')
    assert run() == 0
    out = capsys.readouterr().out
    assert NO_KEY in out
    assert f"  -      {tmp_path / 'config.toml'}" in out
    assert f"  -      {locations.config_dir() / 'config.toml'}" in out
    assert (
        "Warnings:\n  settings.json: unknown key promptTrimer; did you mean promptTrimmer?" in out
    )


def test_report_names_the_files_the_app_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A remembered choice the app cannot use is undone by deleting or editing this file.
    from tui.app.preferences import Preferences

    monkeypatch.chdir(tmp_path)
    assert run() == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"  preferences      {Preferences.default_path()}" in lines
    assert Preferences.default_path().parent == locations.state_dir()
    assert f"  chat history     {locations.history_db_path()}" in lines


def test_report_config_error_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.toml").write_text('[llm]\napi_key = "sk-x"\ntimeout_seconds = "soon"\n')
    assert run() == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        'firsttoken: error: config.toml: llm.timeout_seconds = "soon": expected a number > 0\n'
    )


def test_cli_config_flags_before_and_after_the_subcommand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["--model", "before", "config"]) == 0
    assert "  model " in capsys.readouterr().out
    assert main(["config", "--base-url", "http://127.0.0.1:9/v1"]) == 0
    out = capsys.readouterr().out
    assert any(
        line.split() == ["base_url", "http://127.0.0.1:9/v1", "flag"] for line in out.splitlines()
    )
    assert main(["config", "--config", str(tmp_path / "missing.toml")]) == 2
    assert "--config" in capsys.readouterr().err


# --- mask_secret --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("secret", "masked"),
    [
        (None, NO_KEY),
        ("sk-abcdefghijklmnop1234", "sk-…1234"),
        ("abcdefghijklmnopqrstuvwxyz", "…wxyz"),
        ("sk-short", HIDDEN),
        ("tiny", HIDDEN),
        ("", HIDDEN),
    ],
)
def test_mask_secret_examples(secret: str | None, masked: str) -> None:
    assert mask_secret(secret) == masked


@given(st.text())
def test_mask_secret_reveals_at_most_the_last_four_characters(secret: str) -> None:
    masked = mask_secret(secret)
    if masked == HIDDEN:
        return
    prefix = "sk-" if secret.startswith("sk-") else ""
    assert masked == f"{prefix}…{secret[-4:]}"
    assert len(secret) - len(prefix) >= 12  # only long keys show anything
