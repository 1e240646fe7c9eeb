"""`firsttoken --messages FILE.json`: a bad file ends before the app opens."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tui.commands.open_app import run
from tui.config import ConfigFlags, load_config


def test_run_exits_2_with_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    config = load_config(ConfigFlags(), env={})
    args = argparse.Namespace(messages=tmp_path / "missing.json")
    assert run(args, config) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("firsttoken: error: ") and "missing.json" in err
    assert len(err.splitlines()) == 1
