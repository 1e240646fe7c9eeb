"""Bad input at every entry is one line and exit 2, and `ask --json` always prints exactly one
JSON object on stdout, whatever failed (argparse's own usage errors included)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import ROOT, firsttoken
from helpers.client import closed_port

pytestmark = pytest.mark.e2e

KEYS = {"status", "error", "model", "reply", "id", "chat_id", "ttft_ms", "trim", "prompt_tokens"}


def _run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        timeout=120,
        env=dict(os.environ),
    )


def _one_object(stdout: bytes) -> dict:
    lines = stdout.decode().splitlines()
    assert len(lines) == 1, stdout
    payload = json.loads(lines[0])
    assert isinstance(payload, dict) and payload.keys() >= KEYS
    return payload


def _one_line(stderr: bytes) -> str:
    errors = [line for line in stderr.decode().splitlines() if "error:" in line]
    assert len(errors) == 1, stderr
    assert "Traceback" not in stderr.decode() and "please report it" not in stderr.decode()
    return errors[0]


def _deep_toml(path: Path) -> Path:
    path.write_text("[llm]\nmodels = " + "[" * 5000 + "]" * 5000 + "\n")
    return path


def _deep_json(path: Path) -> Path:
    path.write_text('{"promptTrimmer": ' + "[" * 100000 + "]" * 100000 + "}")
    return path


@pytest.mark.parametrize(
    ("args", "stdin", "kind", "says"),
    [
        (["--bogus"], b"", "usage", "ask: unknown flag --bogus"),
        (["--budget", "0"], b"", "usage", "--budget"),
        ([], b"", "usage", "no prompt"),
        ([], b"caf\xe9 au lait", "usage", "stdin: not UTF-8 text (byte 3: 0xe9)"),
        (["--base-url", "ftp://nope"], b"", "config", "--base-url"),
    ],
)
def test_ask_json_prints_one_object_for_usage_errors(
    args: list[str], stdin: bytes, kind: str, says: str
) -> None:
    done = _run("ask", "--json", *args, stdin=stdin)
    assert done.returncode == 2
    payload = _one_object(done.stdout)
    assert payload["status"] == "error" and payload["error"]["kind"] == kind
    assert says in payload["error"]["message"]
    assert all(payload[key] is None for key in ("model", "reply", "id", "ttft_ms"))
    assert says.split(":")[0] in _one_line(done.stderr) or "usage" in done.stderr.decode()


def test_ask_json_with_global_flags_first(tmp_path: Path) -> None:
    done = _run("--model", "m", "ask", "--json", "--no-such-flag")
    assert done.returncode == 2 and _one_object(done.stdout)["error"]["kind"] == "usage"


@pytest.mark.parametrize("make", [_deep_toml, _deep_json])
def test_deeply_nested_config_files_are_one_line_exit_2(tmp_path: Path, make) -> None:
    name = "config.toml" if make is _deep_toml else "settings.json"
    path = make(tmp_path / name)
    flag = "--config" if name == "config.toml" else "--settings"
    for command in (["config"], ["ask", "hi"]):
        done = _run(flag, str(path), *command)
        assert done.returncode == 2, done.stderr
        assert "nested too deeply" in _one_line(done.stderr)
    done = _run(flag, str(path), "ask", "--json", "hi")
    assert done.returncode == 2 and _one_object(done.stdout)["error"]["kind"] == "config"


def test_invalid_utf8_on_stdin_is_one_line_exit_2() -> None:
    done = _run("ask", stdin=b"\xff\xfe bytes")
    assert done.returncode == 2
    assert _one_line(done.stderr) == (
        "firsttoken: error: stdin: not UTF-8 text (byte 0: 0xff); send UTF-8 "
        "(e.g. through iconv -t UTF-8)"
    )


def test_ask_json_prints_one_object_when_the_request_fails() -> None:
    done = firsttoken("ask", "--json", "--base-url", f"http://127.0.0.1:{closed_port()}/v1", "hi")
    assert done.returncode == 1
    payload = _one_object(done.stdout.encode())
    assert payload["status"] == "error" and payload["error"]["kind"] == "connection"
    assert payload["chat_id"] is not None  # the prompt was saved first
