"""Provider presets, extra headers and query parameters, and proxies from the environment: what
they set, what wins over them, their one-line errors, and how `firsttoken config` shows them
(credentials masked)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tui.commands import show_config
from tui.config import ConfigError, ConfigFlags, load_config
from tui.engine.http import Origin

NO_FLAGS = ConfigFlags()


def toml(folder: Path, text: str) -> None:
    (folder / "config.toml").write_text(text, encoding="utf-8")


def test_a_preset_fills_base_url_key_and_headers_and_keeps_the_openai_key_out(
    tmp_path: Path,
) -> None:
    env = {"OPENROUTER_API_KEY": "sk-or-router-key-1234", "OPENAI_API_KEY": "sk-openai-5678"}
    config = load_config(ConfigFlags(provider="openrouter"), env=env, cwd=tmp_path)
    assert config.base_url == "https://openrouter.ai/api/v1"
    assert config.origin("base_url") == "provider:openrouter"
    assert config.api_key == "sk-or-router-key-1234"
    assert config.origin("api_key") == "env:OPENROUTER_API_KEY (provider openrouter)"
    assert config.extra_headers == {"X-Title": "firsttoken"}
    assert config.provider == "openrouter" and config.origin("provider") == "flag"
    # Without the provider's own key, the general OpenAI key is still not sent to it.
    bare = load_config(
        ConfigFlags(provider="openrouter"), env={"OPENAI_API_KEY": "sk-x"}, cwd=tmp_path
    )
    assert bare.api_key is None and not bare.uses_demo_endpoint


def test_explicit_settings_win_over_the_preset(tmp_path: Path) -> None:
    toml(
        tmp_path,
        '[llm]\nprovider = "vllm"\nbase_url = "http://gpu-box:9000/v1"\n'
        'extra_headers = { "X-Title" = "mine", "X-Team" = "${TEAM}" }\n',
    )
    env = {"VLLM_API_KEY": "token-abc", "FIRSTTOKEN_API_KEY": "sk-explicit-key-0000", "TEAM": "a"}
    config = load_config(NO_FLAGS, env=env, cwd=tmp_path)
    assert config.base_url == "http://gpu-box:9000/v1"
    assert config.origin("base_url") == "config.toml:llm.base_url"
    assert config.api_key == "sk-explicit-key-0000"  # FIRSTTOKEN_API_KEY wins over the preset's
    assert config.extra_headers == {"X-Title": "mine", "X-Team": "a"}
    # The flag's provider wins over the file's.
    flagged = load_config(ConfigFlags(provider="ollama"), env={"TEAM": "a"}, cwd=tmp_path)
    assert flagged.provider == "ollama" and flagged.base_url == "http://gpu-box:9000/v1"


def test_a_preset_header_and_the_files_headers_add_up(tmp_path: Path) -> None:
    toml(
        tmp_path,
        '[llm]\nprovider = "openrouter"\nextra_headers = { "HTTP-Referer" = "https://x.dev" }\n',
    )
    config = load_config(NO_FLAGS, env={}, cwd=tmp_path)
    assert config.extra_headers == {"X-Title": "firsttoken", "HTTP-Referer": "https://x.dev"}
    assert config.origin("extra_headers") == "provider:openrouter + config.toml:llm.extra_headers"


def test_openai_model_windows_are_filled_in_unless_set(tmp_path: Path) -> None:
    config = load_config(ConfigFlags(provider="openai", model="gpt-4o-mini"), env={}, cwd=tmp_path)
    assert config.context_window == 128_000
    assert config.origin("context_window") == "provider:openai (gpt-4o-mini)"
    assert (
        load_config(
            ConfigFlags(provider="openai", model="local"), env={}, cwd=tmp_path
        ).context_window
        is None
    )
    toml(tmp_path, "[llm]\ncontext_window = 16000\n")
    own = load_config(ConfigFlags(provider="openai", model="gpt-4o"), env={}, cwd=tmp_path)
    assert own.context_window == 16000


def test_azure_needs_its_endpoint_and_sends_the_key_in_its_header(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"AZURE_OPENAI_ENDPOINT .* or set base_url"):
        load_config(ConfigFlags(provider="azure"), env={}, cwd=tmp_path)
    env = {
        "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com/",
        "AZURE_OPENAI_API_KEY": "k" * 32,
    }
    config = load_config(ConfigFlags(provider="azure"), env=env, cwd=tmp_path)
    assert config.base_url == "https://res.openai.azure.com/openai/v1"
    assert config.api_key_header == "api-key" and config.api_key == "k" * 32


@pytest.mark.parametrize(
    "flags, text, message",
    [
        (ConfigFlags(provider="nope"), "", "--provider nope: expected one of openai, openrouter"),
        (NO_FLAGS, '[llm]\nprovider = "nope"\n', 'config.toml: llm.provider = "nope": expected'),
        (NO_FLAGS, '[llm]\nextra_headers = { "Bad Name" = "x" }\n', "llm.extra_headers: expected"),
        (NO_FLAGS, '[llm]\nextra_headers = { "X-A" = "a\\nb" }\n', "a value without line breaks"),
        (NO_FLAGS, '[llm]\nextra_query = ["api-version"]\n', "llm.extra_query: expected a table"),
        (NO_FLAGS, '[llm]\napi_key_header = "two words"\n', "llm.api_key_header"),
    ],
)
def test_bad_values_are_one_line_errors(
    tmp_path: Path, flags: ConfigFlags, text: str, message: str
) -> None:
    toml(tmp_path, text)
    with pytest.raises(ConfigError) as failed:
        load_config(flags, env={}, cwd=tmp_path)
    assert message in str(failed.value) and "\n" not in str(failed.value)


def test_a_bad_header_value_is_not_repeated_in_the_error(tmp_path: Path) -> None:
    toml(tmp_path, '[llm]\nextra_headers = { "api-key" = "sk-secret-value\\r\\nX: y" }\n')
    with pytest.raises(ConfigError) as failed:
        load_config(NO_FLAGS, env={}, cwd=tmp_path)
    assert "sk-secret-value" not in str(failed.value)


def test_proxies_from_the_environment(tmp_path: Path) -> None:
    env = {"HTTPS_PROXY": "http://alice:pw@proxy.corp:3128", "NO_PROXY": "localhost,.internal"}
    config = load_config(NO_FLAGS, env=env, cwd=tmp_path)
    assert config.proxies.https is not None
    assert config.proxies.https.origin == Origin("http", "proxy.corp", 3128)
    assert config.proxies.no_proxy == ("localhost", ".internal")
    assert config.origin("proxies") == "env:HTTPS_PROXY, env:NO_PROXY"
    with pytest.raises(ConfigError, match=r"^\$ALL_PROXY: a socks5:// proxy"):
        load_config(NO_FLAGS, env={"ALL_PROXY": "socks5://h:1080"}, cwd=tmp_path)
    ignored = load_config(NO_FLAGS, env={"HTTP_PROXY": "http://p:80"}, cwd=tmp_path)
    assert ignored.proxies.http is None
    assert any("$HTTP_PROXY is ignored" in warning for warning in ignored.warnings)


def test_config_report_masks_credentials_in_headers_query_and_proxies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    toml(
        tmp_path,
        '[llm]\nprovider = "azure"\n'
        'extra_headers = { "X-Title" = "firsttoken", "X-Api-Token" = "tok-very-secret-98765" }\n'
        'extra_query = { "api-version" = "2024-10-21", "sig" = "sig-very-secret-4321" }\n',
    )
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-very-secret-abcd")
    monkeypatch.setenv("HTTPS_PROXY", "http://alice:proxy-pass@proxy.corp:3128")
    code = show_config.run(argparse.Namespace(config_action=None), ConfigFlags())
    out = capsys.readouterr().out
    assert code == 0
    for secret in ("very-secret", "proxy-pass", "alice"):
        assert secret not in out
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert (
        "provider:azure" in rows["base_url"]
        and "res.openai.azure.com/openai/v1" in rows["base_url"]
    )
    assert "env:AZURE_OPENAI_API_KEY (provider azure)" in rows["api_key"]
    assert (
        "X-Title=firsttoken" in rows["extra_headers"] and "X-Api-Token=…" in rows["extra_headers"]
    )
    assert "api-version=2024-10-21" in rows["extra_query"]
    assert "https http://***@proxy.corp:3128" in rows["proxies"]
    assert "env:HTTPS_PROXY" in rows["proxies"]
    assert "api-key" in rows["api_key_header"] and "provider:azure" in rows["api_key_header"]
