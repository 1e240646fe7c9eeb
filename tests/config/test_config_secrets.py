"""Secrets in the configuration: `config` masks URL credentials, an error never echoes a key
written into base_url, and a file holding a literal key that others can read is warned about
with the chmod fix (by `config` and by every command that loads the config)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli import firsttoken

from tui.config import ConfigError, ConfigFlags, load_config

SECRET = "sk-literal-secret-0123456789"


def _config_file(folder: Path, body: str, mode: int) -> Path:
    path = folder / "config.toml"
    path.write_text(body)
    path.chmod(mode)
    return path


@pytest.mark.e2e
def test_config_masks_userinfo_and_secret_query_values(tmp_path: Path) -> None:
    url = "http://alice:hunter2-pass@127.0.0.1:9/v1?api-version=3&api-key=qk-0123456789abc"
    done = firsttoken("config", "--base-url", url)
    assert done.returncode == 0, done.stderr
    assert "hunter2-pass" not in done.stdout and "qk-0123456789abc" not in done.stdout
    assert "http://alice:****@127.0.0.1:9/v1?api-version=3&api-key=****" in done.stdout


@pytest.mark.parametrize(
    "base_url",
    [SECRET, f"api.example.com/v1?api-key={SECRET}", f"ftp://user:{SECRET}@host/v1"],
)
@pytest.mark.e2e
def test_a_key_written_into_base_url_is_not_echoed(tmp_path: Path, base_url: str) -> None:
    path = _config_file(tmp_path, f'[llm]\nbase_url = "{base_url}"\n', 0o600)
    with pytest.raises(ConfigError) as caught:
        load_config(ConfigFlags(config_path=path), env={}, cwd=tmp_path)
    assert SECRET not in str(caught.value) and "base_url" in str(caught.value)
    done = firsttoken("--base-url", base_url, "ask", "hi")
    assert done.returncode == 2 and SECRET not in done.stderr + done.stdout


@pytest.mark.e2e
def test_a_readable_file_with_a_literal_key_warns_with_the_fix(tmp_path: Path) -> None:
    path = _config_file(tmp_path, f'[llm]\napi_key = "{SECRET}"\n', 0o644)
    config = load_config(ConfigFlags(config_path=path), env={}, cwd=tmp_path)
    (warning,) = config.warnings
    assert warning.endswith(f"run chmod 600 {path}") and "others can read it" in warning
    assert SECRET not in warning
    for command in (["config"], ["ask", "--base-url", "http://127.0.0.1:9/v1", "hi"]):
        done = firsttoken("--config", str(path), *command)
        assert f"chmod 600 {path}" in done.stderr + done.stdout
        assert SECRET not in done.stderr + done.stdout


@pytest.mark.parametrize(
    ("body", "mode"),
    [
        (f'[llm]\napi_key = "{SECRET}"\n', 0o600),  # private: nothing to say
        ('[llm]\napi_key = "${FIRSTTOKEN_TEST_KEY}"\n', 0o644),  # no key in the file
    ],
)
def test_no_warning_for_a_private_file_or_a_variable(tmp_path: Path, body: str, mode: int) -> None:
    path = _config_file(tmp_path, body, mode)
    config = load_config(
        ConfigFlags(config_path=path), env={"FIRSTTOKEN_TEST_KEY": SECRET}, cwd=tmp_path
    )
    assert config.warnings == ()


def test_config_init_writes_private_files(tmp_path: Path) -> None:
    import os
    import stat

    from tui.commands.show_config import init

    previous = os.umask(0o022)
    try:
        import io

        assert init(tmp_path / "new", io.StringIO(), io.StringIO()) == 0
    finally:
        os.umask(previous)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "new").iterdir()}
    assert modes == {"config.toml": 0o600, "settings.json": 0o600}
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700
