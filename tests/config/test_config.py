"""Loading, precedence, origins, ${VAR} expansion and discovery of config.toml / settings.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tui import locations
from tui.config import Config, ConfigFlags, load_config
from tui.engine.metrics.record import DEFAULT_REQUEST_CLASSES, RequestClass, Thresholds

FIXTURES = Path(__file__).parent / "fixtures"
NO_FLAGS = ConfigFlags()


def write(folder: Path, name: str, text: str, mode: int = 0o600) -> Path:
    """A config file as `config init` makes it (0600: no warning about a readable key)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def settings(data: dict) -> str:
    return json.dumps(data)


def test_no_files_gives_defaults_and_the_demo_endpoint(tmp_path: Path) -> None:
    config = load_config(NO_FLAGS, env={}, cwd=tmp_path)
    assert config == Config()
    assert config.uses_demo_endpoint
    assert set(config.origins.values()) == {"default"}
    assert config.config_path is None and config.settings_path is None
    assert config.warnings == ()
    assert config.request_classes == DEFAULT_REQUEST_CLASSES


def test_article_files_verbatim_load(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "article_config.toml", tmp_path / "config.toml")
    shutil.copy(FIXTURES / "article_settings.json", tmp_path / "settings.json")
    config = load_config(NO_FLAGS, env={}, cwd=tmp_path)
    assert config.base_url == "https://taotoken.net/api"
    assert config.api_key == "sk-你的TaoToken密钥"
    assert config.model == "qwen-7b-chat"
    assert config.timeout_seconds == 60.0
    assert config.streaming is True
    assert config.chunk_timeout_ms == 800
    assert config.token_budget == 6000 and config.reserve_for_output == 2000
    assert config.priority_order == ("system", "latest_user", "tool_result", "history")
    assert (config.history_keep_head, config.history_keep_tail) == (2, 4)
    assert (config.temperature, config.max_tokens, config.record_ttft) == (0.1, 2048, True)
    assert (config.ttft_warn_ms, config.ttft_error_ms) == (1200.0, 2500.0)
    assert config.log_every_request is True
    assert not config.uses_demo_endpoint
    # The placeholder key loads, but HTTP headers cannot carry it: a warning, without the key.
    assert len(config.warnings) == 1
    assert "non-ASCII" in config.warnings[0]
    assert "TaoToken" not in config.warnings[0]


def test_design_example_with_key_unset_uses_no_key(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "design_config.toml", tmp_path / "config.toml")
    config = load_config(NO_FLAGS, env={}, cwd=tmp_path)
    assert config.api_key is None
    assert config.base_url == "https://api.example.com/v1"
    assert config.origins["api_key"] == "default"
    assert config.warnings == ()


def test_design_example_with_key_set_expands_it(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "design_config.toml", tmp_path / "config.toml")
    config = load_config(NO_FLAGS, env={"FIRSTTOKEN_API_KEY": "sk-abc"}, cwd=tmp_path)
    assert config.api_key == "sk-abc"


def test_shipped_examples_load_without_warnings_and_use_the_demo(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    shutil.copy(root / "config.example.toml", tmp_path / "config.toml")
    shutil.copy(root / "settings.example.json", tmp_path / "settings.json")
    config = load_config(NO_FLAGS, env={}, cwd=tmp_path)
    assert config.warnings == ()
    assert config.uses_demo_endpoint
    assert config.request_classes == (
        RequestClass("short_qa", 500.0, 512),
        RequestClass("long_generation", 2000.0, None),
    )
    assert config.demo_preset == "cpu-small"


def test_origins_name_file_and_key(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "article_config.toml", tmp_path / "config.toml")
    shutil.copy(FIXTURES / "article_settings.json", tmp_path / "settings.json")
    config = load_config(NO_FLAGS, env={}, cwd=tmp_path)
    assert config.origins["token_budget"] == "settings.json:promptTrimmer.defaultBudget"
    assert config.origins["reserve_for_output"] == "settings.json:promptTrimmer.reserveForOutput"
    assert config.origins["streaming"] == "settings.json:streaming.enabled"
    assert config.origins["ttft_warn_ms"] == "settings.json:metrics.ttftWarnMs"
    assert config.origins["model"] == "config.toml:llm.model"
    assert config.origins["chunk_timeout_ms"] == "config.toml:llm.streaming.chunk_timeout_ms"
    assert config.origins["max_retries"] == "default"
    assert config.origin("context_window") == "default"


@pytest.mark.parametrize(
    ("toml_line", "json_data", "field", "expected"),
    [
        (
            "[llm.prompt]\ntoken_budget = 100",
            {"promptTrimmer": {"defaultBudget": 200}},
            "token_budget",
            200,
        ),
        (
            "[llm.prompt]\nreserve_for_output = 100",
            {"promptTrimmer": {"reserveForOutput": 300}},
            "reserve_for_output",
            300,
        ),
        ("[llm.streaming]\nenabled = true", {"streaming": {"enabled": False}}, "streaming", False),
        (
            "[llm.streaming]\nfirst_token_warn_ms = 900",
            {"metrics": {"ttftWarnMs": 700}},
            "ttft_warn_ms",
            700.0,
        ),
    ],
)
def test_settings_json_wins_where_the_files_overlap(
    tmp_path: Path, toml_line: str, json_data: dict, field: str, expected: object
) -> None:
    write(tmp_path, "config.toml", toml_line)
    write(tmp_path, "settings.json", settings(json_data))
    config = load_config(NO_FLAGS, env={}, cwd=tmp_path)
    assert getattr(config, field) == expected
    assert config.origins[field].startswith("settings.json:")


def test_toml_value_applies_when_settings_json_leaves_it_out(tmp_path: Path) -> None:
    write(tmp_path, "config.toml", "[llm.prompt]\ntoken_budget = 100")
    write(tmp_path, "settings.json", settings({"streaming": {"maxTokens": 50}}))
    config = load_config(NO_FLAGS, env={}, cwd=tmp_path)
    assert config.token_budget == 100
    assert config.origins["token_budget"] == "config.toml:llm.prompt.token_budget"


def test_precedence_flag_over_env_over_files(tmp_path: Path) -> None:
    write(
        tmp_path,
        "config.toml",
        '[llm]\nbase_url = "http://file/v1"\nmodel = "file-model"\napi_key = "sk-file-key-0000000"',
    )
    env = {
        "FIRSTTOKEN_BASE_URL": "http://firsttoken-env/v1",
        "OPENAI_BASE_URL": "http://openai-env/v1",
        "FIRSTTOKEN_MODEL": "env-model",
        "FIRSTTOKEN_API_KEY": "sk-env-key",
        "OPENAI_API_KEY": "sk-openai-key",
    }
    config = load_config(NO_FLAGS, env=env, cwd=tmp_path)
    assert config.base_url == "http://firsttoken-env/v1"
    assert config.origins["base_url"] == "env:FIRSTTOKEN_BASE_URL"
    assert config.model == "env-model" and config.origins["model"] == "env:FIRSTTOKEN_MODEL"
    assert config.api_key == "sk-env-key" and config.origins["api_key"] == "env:FIRSTTOKEN_API_KEY"

    flags = ConfigFlags(base_url="http://flag/v1", model="flag-model", api_key_env="MY_KEY")
    config = load_config(flags, env={**env, "MY_KEY": "sk-mine"}, cwd=tmp_path)
    assert (config.base_url, config.model, config.api_key) == (
        "http://flag/v1",
        "flag-model",
        "sk-mine",
    )
    assert config.origins["base_url"] == "flag" and config.origins["model"] == "flag"
    assert config.origins["api_key"] == "env:MY_KEY (--api-key-env)"


def test_openai_env_vars_are_the_fallback(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": "sk-openai", "OPENAI_BASE_URL": "https://api.openai.com/v1"}
    config = load_config(NO_FLAGS, env=env, cwd=tmp_path)
    assert config.api_key == "sk-openai" and config.origins["api_key"] == "env:OPENAI_API_KEY"
    assert config.origins["base_url"] == "env:OPENAI_BASE_URL"
    assert config.warnings == ()


def test_empty_env_vars_count_as_unset(tmp_path: Path) -> None:
    config = load_config(
        NO_FLAGS, env={"FIRSTTOKEN_API_KEY": "", "OPENAI_API_KEY": " "}, cwd=tmp_path
    )
    assert config.api_key is None and config.uses_demo_endpoint


def test_openai_key_overriding_a_file_key_warns_without_showing_it(tmp_path: Path) -> None:
    write(tmp_path, "config.toml", '[llm]\napi_key = "sk-file-secret-123456"')
    config = load_config(NO_FLAGS, env={"OPENAI_API_KEY": "sk-openai-secret-98765"}, cwd=tmp_path)
    assert config.api_key == "sk-openai-secret-98765"
    (warning,) = config.warnings
    assert "OPENAI_API_KEY" in warning and "config.toml:llm.api_key" in warning
    assert "secret" not in warning


def test_env_var_expansion_in_any_string(tmp_path: Path) -> None:
    write(
        tmp_path,
        "config.toml",
        '[llm]\nbase_url = "http://${HOST}:${PORT}/v1"\n'
        'models = ["${M}", "other"]\n[demo]\npreset = "${PRESET}"',
    )
    write(tmp_path, "settings.json", settings({"promptTrimmer": {"priorityOrder": ["${FIRST}"]}}))
    env = {"HOST": "127.0.0.1", "PORT": "9000", "M": "qwen", "PRESET": "instant", "FIRST": "system"}
    config = load_config(NO_FLAGS, env=env, cwd=tmp_path)
    assert config.base_url == "http://127.0.0.1:9000/v1"
    assert config.models == ("qwen", "other")
    assert config.demo_preset == "instant"
    assert config.priority_order == ("system",)


def test_request_classes_and_demo_overrides(tmp_path: Path) -> None:
    write(
        tmp_path,
        "config.toml",
        "[llm]\ncontext_window = 32768\nmax_retries = 0\n"
        'models = ["a", "b"]\n'
        "[llm.request_classes]\nshort_qa = {ttft_target_ms = 300}\n"
        "chat = {ttft_target_ms = 800, max_output_tokens = 1024}\n"
        "long_generation = {ttft_target_ms = 2500}\n"
        '[demo]\npreset = "h100-70b"\nrtt_ms = 5\nreply_tokens = 40\n',
    )
    config = load_config(NO_FLAGS, env={}, cwd=tmp_path)
    assert config.context_window == 32768 and config.max_retries == 0
    assert config.models == ("a", "b")
    # A default class named again keeps its unset fields (short_qa keeps max_output_tokens=512).
    assert config.request_classes == (
        RequestClass("short_qa", 300.0, 512),
        RequestClass("chat", 800.0, 1024),
        RequestClass("long_generation", 2500.0, None),
    )
    assert config.origins["request_classes"] == "config.toml:llm.request_classes"
    assert config.demo_preset == "h100-70b"
    assert config.demo_overrides == {"rtt_ms": 5.0, "reply_tokens": 40}
    assert config.origins["demo_overrides"] == "config.toml:demo"


def test_derived_values() -> None:
    config = Config(max_tokens=4096, reserve_for_output=1000, ttft_warn_ms=10, ttft_error_ms=20)
    assert config.output_limit == 1000
    assert config.thresholds() == Thresholds(warn_ms=10, error_ms=20)
    assert config.trim_enabled_by_default
    assert not Config(trim_strategy="none").trim_enabled_by_default
    assert not Config(base_url="http://x/v1").uses_demo_endpoint
    assert not Config(api_key="sk-x").uses_demo_endpoint
    assert "sk-x" not in repr(Config(api_key="sk-x"))


def test_trim_policy_from_config() -> None:
    trim = pytest.importorskip("tui.engine.tokens.trim")
    config = Config(
        trim_strategy="recent",
        keep_system=False,
        priority_order=("system",),
        history_keep_head=1,
        history_keep_tail=9,
    )
    policy = config.trim_policy()
    assert isinstance(policy, trim.TrimPolicy)
    assert (policy.strategy, policy.keep_system, policy.keep_latest_user) == ("recent", False, True)
    assert policy.priority_order == ("system",)
    assert (policy.history_keep_head, policy.history_keep_tail) == (1, 9)


# --- discovery: flag > env var > current dir > user config dir -------------------------------


@pytest.fixture
def four_places(tmp_path: Path) -> dict[str, Path]:
    """A config.toml and settings.json in each of the four places, each with its own model /
    budget, so the loaded value tells which one won."""
    places = {
        "flag": tmp_path / "flagged",
        "env": tmp_path / "from-env",
        "cwd": tmp_path / "work",
        "user": locations.config_dir(),
    }
    for budget, (name, folder) in enumerate(places.items(), start=100):
        write(folder, "config.toml", f'[llm]\nmodel = "{name}"')
        write(folder, "settings.json", settings({"promptTrimmer": {"defaultBudget": budget}}))
    return places


def test_discovery_order(four_places: dict[str, Path]) -> None:
    cwd = four_places["cwd"]
    flags = ConfigFlags(
        config_path=four_places["flag"] / "config.toml",
        settings_path=four_places["flag"] / "settings.json",
    )
    env = {
        "FIRSTTOKEN_CONFIG": str(four_places["env"] / "config.toml"),
        "FIRSTTOKEN_SETTINGS": str(four_places["env"] / "settings.json"),
    }
    assert load_config(flags, env=env, cwd=cwd).model == "flag"
    assert load_config(flags, env=env, cwd=cwd).token_budget == 100
    assert load_config(NO_FLAGS, env=env, cwd=cwd).model == "env"
    assert load_config(NO_FLAGS, env=env, cwd=cwd).token_budget == 101
    assert load_config(NO_FLAGS, env={}, cwd=cwd).model == "cwd"
    (cwd / "config.toml").unlink()
    (cwd / "settings.json").unlink()
    config = load_config(NO_FLAGS, env={}, cwd=cwd)
    assert (config.model, config.token_budget) == ("user", 103)
    assert config.config_path == four_places["user"] / "config.toml"
    # Both places were searched, in order, for each file.
    assert config.searched == (
        str(cwd / "config.toml"),
        str(four_places["user"] / "config.toml"),
        str(cwd / "settings.json"),
        str(four_places["user"] / "settings.json"),
    )


def test_each_file_is_discovered_independently(tmp_path: Path) -> None:
    write(tmp_path, "settings.json", settings({"streaming": {"maxTokens": 77}}))
    write(locations.config_dir(), "config.toml", '[llm]\nmodel = "user-dir"')
    config = load_config(NO_FLAGS, env={}, cwd=tmp_path)
    assert (config.model, config.max_tokens) == ("user-dir", 77)
    assert config.settings_path == tmp_path / "settings.json"


def test_relative_flag_paths_resolve_against_cwd(tmp_path: Path) -> None:
    write(tmp_path / "sub", "mine.toml", '[llm]\nmodel = "relative"')
    config = load_config(ConfigFlags(config_path=Path("sub/mine.toml")), env={}, cwd=tmp_path)
    assert config.model == "relative"
    assert config.searched[0] == str(tmp_path / "sub" / "mine.toml")


def test_empty_file_key_then_openai_key_does_not_warn(tmp_path: Path) -> None:
    write(tmp_path, "config.toml", '[llm]\napi_key = ""')
    config = load_config(NO_FLAGS, env={"OPENAI_API_KEY": "sk-openai"}, cwd=tmp_path)
    assert config.api_key == "sk-openai" and config.warnings == ()


def test_demo_prefix_cache_override_is_a_boolean(tmp_path: Path) -> None:
    from tui.config import ConfigError
    from tui.demo.latency_model import latency_model

    write(tmp_path, "config.toml", '[demo]\npreset = "cpu-small"\nprefix_cache = false\n')
    config = load_config(ConfigFlags(), env={}, cwd=tmp_path)
    assert config.demo_overrides == {"prefix_cache": False}
    assert latency_model(config.demo_preset, config.demo_overrides).prefix_cache is False
    write(tmp_path, "config.toml", '[demo]\nprefix_cache = "no"\n')
    with pytest.raises(ConfigError, match="prefix_cache"):
        load_config(ConfigFlags(), env={}, cwd=tmp_path)
