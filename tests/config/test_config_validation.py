"""Every config error is one line naming file, key, value and what is expected; never the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.config import ConfigError, ConfigFlags, load_config

NO_FLAGS = ConfigFlags()


def load(tmp_path: Path, toml: str | None = None, json_text: str | None = None, **kwargs):
    if toml is not None:
        (tmp_path / "config.toml").write_text(toml, encoding="utf-8")
    if json_text is not None:
        (tmp_path / "settings.json").write_text(json_text, encoding="utf-8")
    return load_config(kwargs.get("flags", NO_FLAGS), env=kwargs.get("env", {}), cwd=tmp_path)


def error_of(tmp_path: Path, toml: str | None = None, json_text: str | None = None, **kw) -> str:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, toml, json_text, **kw)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_toml_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    message = error_of(tmp_path, '[llm]\nmodel = "x"\ntimeout_seconds = = 3\n')
    assert message.startswith("config.toml:3:19: ")
    assert "Invalid value" in message
    assert "(at line" not in message


def test_toml_error_at_end_of_document(tmp_path: Path) -> None:
    message = error_of(tmp_path, '[llm]\nmodels = ["a",\n')
    assert message.startswith("config.toml:3:1: ")


def test_json_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    message = error_of(tmp_path, json_text='{\n  "streaming": {"enabled": true,}\n}')
    assert message.startswith("settings.json:2:33: ")
    assert "double quotes" in message


def test_json_top_level_must_be_an_object(tmp_path: Path) -> None:
    assert "expected a JSON object" in error_of(tmp_path, json_text="[1, 2]")


def test_files_outside_cwd_are_named_by_full_path(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere" / "c.toml"
    other.parent.mkdir()
    other.write_text("[llm\n", encoding="utf-8")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    with pytest.raises(ConfigError, match=rf"^{other}:1:5: "):
        load_config(ConfigFlags(config_path=other), env={}, cwd=cwd)


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        (
            '[llm]\ntimeout_seconds = "60"',
            'config.toml: llm.timeout_seconds = "60": expected a number > 0',
        ),
        (
            "[llm]\ntimeout_seconds = 0",
            "config.toml: llm.timeout_seconds = 0: expected a number > 0",
        ),
        (
            "[llm]\nmax_retries = 11",
            "config.toml: llm.max_retries = 11: expected a whole number between 0 and 10",
        ),
        (
            "[llm]\ncontext_window = true",
            "config.toml: llm.context_window = true: expected a whole number >= 1, not a boolean",
        ),
        (
            '[llm]\nbase_url = "api.example.com/v1"',
            'config.toml: llm.base_url = "api.example.com/v1": expected an http:// or https:// URL',
        ),
        ('[llm]\nmodel = ""', 'config.toml: llm.model = "": expected a non-empty string'),
        ('[llm]\nmodels = "a"', 'config.toml: llm.models = "a": expected a list of strings'),
        (
            '[llm.streaming]\nenabled = "true"',
            'config.toml: llm.streaming.enabled = "true": expected true or false',
        ),
        (
            "[llm.streaming]\nenabled = 1",
            "config.toml: llm.streaming.enabled = 1: expected true or false",
        ),
        (
            "[llm.streaming]\nchunk_timeout_ms = 800.5",
            "config.toml: llm.streaming.chunk_timeout_ms = 800.5: expected a whole number >= 1",
        ),
        (
            "[llm.prompt]\ntoken_budget = -1",
            "config.toml: llm.prompt.token_budget = -1: expected a whole number >= 1",
        ),
        (
            '[llm.prompt]\ntrim_strategy = "oldest"',
            'config.toml: llm.prompt.trim_strategy = "oldest": '
            "expected one of priority, recent, none",
        ),
        ('[llm]\nstreaming = "yes"', 'config.toml: llm.streaming = "yes": expected a table'),
        ('[demo]\npreset = "gpu"', 'config.toml: demo.preset = "gpu": expected one of cpu-small'),
        (
            "[demo]\ndecode_tokens_per_s = 0",
            "config.toml: demo.decode_tokens_per_s = 0: expected a number > 0",
        ),
        (
            "[llm.request_classes]\nquick = {max_output_tokens = 10}",
            "config.toml: llm.request_classes.quick: missing ttft_target_ms (a number > 0",
        ),
        (
            "[llm.request_classes]\nquick = {ttft_target_ms = -5}",
            "config.toml: llm.request_classes.quick.ttft_target_ms = -5: expected a number > 0",
        ),
        ("[llm]\nrequest_classes = 3", "config.toml: llm.request_classes = 3: expected a table"),
    ],
)
def test_toml_type_and_range_errors(tmp_path: Path, toml: str, expected: str) -> None:
    assert error_of(tmp_path, toml).startswith(expected)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"promptTrimmer": {"defaultBudget": -1}},
            "settings.json: promptTrimmer.defaultBudget = -1: expected a whole number >= 1",
        ),
        (
            {"promptTrimmer": {"defaultBudget": 6000.5}},
            "settings.json: promptTrimmer.defaultBudget = 6000.5: expected a whole number",
        ),
        (
            {"promptTrimmer": {"reserveForOutput": True}},
            "settings.json: promptTrimmer.reserveForOutput = true: expected a whole number >= 1, "
            "not a boolean",
        ),
        (
            {"promptTrimmer": {"priorityOrder": ["system", "newest"]}},
            'settings.json: promptTrimmer.priorityOrder = ["system", "newest"]: expected a list of '
            "items from system, latest_user, tool_result, history",
        ),
        ({"promptTrimmer": {"priorityOrder": ["system", "system"]}}, "without repeats"),
        ({"promptTrimmer": {"priorityOrder": []}}, "expected a non-empty list of items"),
        (
            {"promptTrimmer": {"historyKeepTail": -2}},
            "settings.json: promptTrimmer.historyKeepTail = -2: expected a whole number >= 0",
        ),
        (
            {"streaming": {"enabled": "false"}},
            'settings.json: streaming.enabled = "false": expected true or false',
        ),
        (
            {"streaming": {"enabled": 0}},
            "settings.json: streaming.enabled = 0: expected true or false",
        ),
        (
            {"streaming": {"temperature": 3}},
            "settings.json: streaming.temperature = 3: expected a number between 0 and 2",
        ),
        (
            {"streaming": {"maxTokens": "2048"}},
            'settings.json: streaming.maxTokens = "2048": expected a whole number >= 1',
        ),
        (
            {"metrics": {"ttftErrorMs": None}},
            "settings.json: metrics.ttftErrorMs = null: expected a number > 0",
        ),
        ({"metrics": 5}, "settings.json: metrics = 5: expected an object"),
    ],
)
def test_json_type_and_range_errors(tmp_path: Path, data: dict, expected: str) -> None:
    assert expected in error_of(tmp_path, json_text=json.dumps(data))


def test_api_key_errors_never_echo_the_key(tmp_path: Path) -> None:
    message = error_of(tmp_path, "[llm]\napi_key = 12345678901234")
    assert message == (
        "config.toml: llm.api_key: expected a string (or leave it out and set FIRSTTOKEN_API_KEY)"
    )


def test_unset_variable_outside_api_key_is_an_error(tmp_path: Path) -> None:
    message = error_of(tmp_path, '[llm]\nbase_url = "${MY_HOST}/v1"')
    assert message.startswith("config.toml: llm.base_url refers to ${MY_HOST}")
    assert "MY_HOST is not set" in message


def test_unset_variable_in_api_key_means_no_key(tmp_path: Path) -> None:
    config = load(tmp_path, '[llm]\napi_key = "${NOT_SET_ANYWHERE}"')
    assert config.api_key is None and config.uses_demo_endpoint


def test_context_window_must_hold_budget_and_reserve(tmp_path: Path) -> None:
    message = error_of(
        tmp_path,
        "[llm]\ncontext_window = 4096\n",
        json.dumps({"promptTrimmer": {"defaultBudget": 3000, "reserveForOutput": 2000}}),
    )
    assert message == (
        "token_budget 3000 (settings.json:promptTrimmer.defaultBudget) + reserve_for_output 2000 "
        "(settings.json:promptTrimmer.reserveForOutput) = 5000 exceeds context_window 4096 "
        "(config.toml:llm.context_window); lower the budget or the reserve"
    )
    assert load(tmp_path, "[llm]\ncontext_window = 5000\n").context_window == 5000


def test_warn_threshold_must_not_exceed_error_threshold(tmp_path: Path) -> None:
    message = error_of(tmp_path, json_text=json.dumps({"metrics": {"ttftWarnMs": 3000}}))
    assert "ttft_warn_ms 3000 (settings.json:metrics.ttftWarnMs)" in message
    assert "ttft_error_ms 2500 (default)" in message


def test_missing_explicit_files_are_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    message = error_of(tmp_path, flags=ConfigFlags(config_path=missing))
    assert message.startswith(f"--config {missing}: no such file")
    message = error_of(tmp_path, flags=ConfigFlags(settings_path=tmp_path))
    assert message.startswith(f"--settings {tmp_path}: is a directory")
    message = error_of(tmp_path, env={"FIRSTTOKEN_SETTINGS": str(tmp_path / "gone.json")})
    assert message.startswith("$FIRSTTOKEN_SETTINGS ") and "no such file" in message


def test_api_key_env_flag_naming_an_unset_variable(tmp_path: Path) -> None:
    message = error_of(tmp_path, flags=ConfigFlags(api_key_env="MY_KEY"))
    assert message.startswith("--api-key-env MY_KEY: the environment variable MY_KEY is not set")


def test_bad_base_url_from_env_or_flag(tmp_path: Path) -> None:
    message = error_of(tmp_path, env={"OPENAI_BASE_URL": "localhost:8000"})
    assert message.startswith('$OPENAI_BASE_URL = "localhost:8000": expected an http')
    message = error_of(tmp_path, flags=ConfigFlags(base_url="ftp://x"))
    assert message.startswith('--base-url = "ftp://x": expected an http')


def test_non_utf8_file(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_bytes(b'[llm]\nmodel = "\xff"\n')
    assert error_of(tmp_path).startswith("config.toml: not UTF-8 text")


def test_unknown_keys_warn_with_the_nearest_known_key(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        '[llm]\nmodle = "x"\nfoo = 1\n[llm.prompt]\ntoken_budgt = 5\n'
        "[llm.request_classes]\nq = {ttft_target_ms = 1, max_tokens = 5}\n",
        json.dumps({"promptTrimer": {}, "streaming": {"maxtokens": 5}, "//": "a comment"}),
    )
    assert config.warnings == (
        "config.toml: unknown key llm.modle; did you mean llm.model?",
        "config.toml: unknown key llm.foo (ignored)",
        "config.toml: unknown key llm.prompt.token_budgt; did you mean llm.prompt.token_budget?",
        "config.toml: unknown key llm.request_classes.q.max_tokens; "
        "did you mean llm.request_classes.q.max_output_tokens?",
        "settings.json: unknown key promptTrimer; did you mean promptTrimmer?",
        "settings.json: unknown key streaming.maxtokens; did you mean streaming.maxTokens?",
    )


def test_unreachable_request_class_warns(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        "[llm.request_classes]\nall = {ttft_target_ms = 900}\n"
        "short = {ttft_target_ms = 100, max_output_tokens = 10}\n",
    )
    (warning,) = config.warnings
    assert "class all has no max_output_tokens" in warning and "short never apply" in warning


def test_errors_never_contain_the_api_key(tmp_path: Path) -> None:
    message = error_of(
        tmp_path,
        '[llm]\napi_key = "sk-topsecret-file-key"\ncontext_window = 10\n',
        env={"FIRSTTOKEN_API_KEY": "sk-topsecret-env-key"},
    )
    assert "topsecret" not in message
    assert "context_window" in message


def test_cwd_that_is_the_user_config_dir_is_searched_once(tmp_path: Path) -> None:
    from tui import locations

    folder = locations.config_dir()
    folder.mkdir(parents=True)
    config = load_config(NO_FLAGS, env={}, cwd=folder)
    assert config.searched == (str(folder / "config.toml"), str(folder / "settings.json"))


def test_a_stall_limit_set_below_the_chunk_timeout_is_refused(tmp_path: Path) -> None:
    message = error_of(
        tmp_path, "[llm.streaming]\nchunk_timeout_ms = 5000\nstall_timeout_ms = 2000\n"
    )
    assert "stall_timeout_ms 2000 (config.toml:llm.streaming.stall_timeout_ms)" in message
    assert "chunk_timeout_ms 5000" in message and "raise stall_timeout_ms" in message


def test_a_chunk_timeout_past_the_default_stall_limit_raises_it_too(tmp_path: Path) -> None:
    # A file written before the stall limit existed, with a patient chunk timeout, still loads.
    config = load(tmp_path, "[llm.streaming]\nchunk_timeout_ms = 120000\n")
    assert config.chunk_timeout_ms == config.stall_timeout_ms == 120_000
    assert load(tmp_path, "[llm.streaming]\nchunk_timeout_ms = 900\n").stall_timeout_ms == 30_000
