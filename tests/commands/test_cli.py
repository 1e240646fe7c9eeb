"""The command line as a user meets it: version, help on every subcommand, flags anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui import __version__
from tui.cli import build_parser

SUBCOMMANDS = ("ask", "config", "demo-server")


def run_cli(*args: str, home: Path, **kwargs) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FIRSTTOKEN_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        **kwargs,
    )


@pytest.mark.e2e
def test_version(isolated_home: Path) -> None:
    result = run_cli("--version", home=isolated_home)
    assert result.returncode == 0
    assert result.stdout.strip() == f"firsttoken {__version__}"


@pytest.mark.e2e
@pytest.mark.parametrize("command", [(), *((name,) for name in SUBCOMMANDS)])
def test_help_on_every_command(command: tuple[str, ...], isolated_home: Path) -> None:
    result = run_cli(*command, "--help", home=isolated_home)
    assert result.returncode == 0
    assert result.stdout.startswith("usage: firsttoken")
    assert "--base-url" in result.stdout  # the global flags are offered everywhere


def test_global_flags_before_or_after_the_subcommand() -> None:
    parser = build_parser()
    before = parser.parse_args(["--model", "m1", "--base-url", "http://x/v1", "ask", "hi"])
    after = parser.parse_args(["ask", "hi", "--model", "m1", "--base-url", "http://x/v1"])
    for args in (before, after):
        assert (args.command, args.prompt, args.model, args.base_url) == (
            "ask",
            "hi",
            "m1",
            "http://x/v1",
        )


@pytest.mark.e2e
def test_bad_flag_value_is_a_usage_error(isolated_home: Path) -> None:
    result = run_cli("ask", "--budget", "zero", "hi", home=isolated_home)
    assert result.returncode == 2
    assert "--budget" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.e2e
def test_config_error_is_one_line_exit_2(isolated_home: Path, tmp_path: Path) -> None:
    broken = tmp_path / "config.toml"
    broken.write_text("[llm]\nmodel = \n", encoding="utf-8")
    result = run_cli("--config", str(broken), "ask", "hi", home=isolated_home)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert str(broken) in lines[0] and ":2:" in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.e2e
def test_closed_pipe_ends_quietly(isolated_home: Path) -> None:
    # `firsttoken ask ... | head -c 20`: the reader leaves early; no error, no traceback.
    with subprocess.Popen(
        [sys.executable, "-m", "tui", "ask", "hi, reply 400 tokens"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "FIRSTTOKEN_HOME": str(isolated_home)},
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.read(20)
        process.stdout.close()
        stderr = process.stderr.read().decode()
        process.wait(timeout=60)
    assert "error" not in stderr.lower()
    assert "Traceback" not in stderr
