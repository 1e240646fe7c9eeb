"""A config path that is a symlink loop or a link to nothing says so, not "no such file"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.cli import firsttoken

from tui.config import ConfigFlags, load_config

pytestmark = pytest.mark.e2e


def test_a_config_that_is_a_symlink_loop_is_named_as_one(tmp_path: Path) -> None:
    loop = tmp_path / "config.toml"
    os.symlink(tmp_path / "other.toml", loop)
    os.symlink(loop, tmp_path / "other.toml")
    result = firsttoken("config", "--config", str(loop))
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert f"--config {loop}: is a symlink loop" in line and "no such file" not in line


def test_a_link_to_nothing_names_its_target(tmp_path: Path) -> None:
    link = tmp_path / "settings.json"
    os.symlink(tmp_path / "gone.json", link)
    result = firsttoken("ask", "--settings", str(link), "hi")
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert f"is a link to {tmp_path / 'gone.json'}, which does not exist" in line


def test_a_dangling_link_where_a_config_is_looked_for_is_a_warning(tmp_path: Path) -> None:
    os.symlink(tmp_path / "gone.toml", tmp_path / "config.toml")
    config = load_config(ConfigFlags(), env={}, cwd=tmp_path)
    (warning,) = config.warnings
    assert f"{tmp_path / 'config.toml'} is a link to" in warning and "skipped" in warning
