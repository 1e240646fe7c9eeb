"""`python -m tui ask` end to end in a subprocess: exit codes, streams, terminals."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.client import demo, fault_url

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ESCAPED_MODEL = "evil\x1b]0;pwned\x07\x1b[31mred\x1b[0m"


@pytest.fixture(scope="module")
def instant():
    with demo("instant") as server:
        yield server


def _ask(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", "ask", *args],
        cwd=ROOT,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )


def test_ok_reply_and_summary(instant) -> None:
    done = _ask("--base-url", instant.base_url, "hello, reply 5 tokens")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert done.stderr.strip().splitlines()[-1].startswith("TTFT ")


def test_json_from_stdin_flags_after_the_subcommand(instant) -> None:
    done = _ask("--json", "--no-stream", "--base-url", instant.base_url, stdin="reply 4 tokens\n")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["streamed"] is False and payload["output_tokens"] == 4
    assert payload["ttft_ms"] == payload["total_ms"]


def test_request_failure_exit_1(instant) -> None:
    done = _ask("--base-url", fault_url(instant, "401"), "hi")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("firsttoken: error: the key was refused")
    assert "Traceback" not in done.stderr


def test_usage_errors_exit_2(tmp_path: Path, instant) -> None:
    done = _ask("--base-url", instant.base_url)
    assert done.returncode == 2 and "no prompt" in done.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    done = _ask("--base-url", instant.base_url, "--messages", str(bad), "hi")
    assert done.returncode == 2 and str(bad) in done.stderr and "Traceback" not in done.stderr


def test_demo_endpoint_notice_when_nothing_configured(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[demo]\npreset = "instant"\n')
    done = _ask("--config", str(config), "reply 3 tokens")
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("No API key or base_url configured: using the embedded demo")
    assert done.stderr.strip().endswith("simulated")


def _ask_on_a_terminal(*args: str) -> tuple[int, bytes]:
    """Run ask with stdout on a pseudo-terminal; return the exit code and the screen bytes."""
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "ask", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    os.close(secondary)
    output = b""
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        output += data
    process.wait(timeout=60)
    os.close(primary)
    return process.returncode, output


def test_control_sequences_are_neutralised_on_a_terminal(instant) -> None:
    # The demo reply echoes the model name: a hostile "model" smuggles escape sequences.
    prompt = "reply 60 tokens"
    code, screen = _ask_on_a_terminal(
        "--base-url", instant.base_url, "--model", ESCAPED_MODEL, prompt
    )
    assert code == 0
    assert b"evil" in screen and b"red" in screen
    assert b"\x1b" not in screen and b"\x07" not in screen


def test_inert_when_piped_raw_with_the_flag_and_in_the_store(instant) -> None:
    piped = _ask("--base-url", instant.base_url, "--model", ESCAPED_MODEL, "reply 60 tokens")
    assert piped.returncode == 0
    # `| cat` or `| less -R` hands the bytes to a terminal all the same: inert there too.
    assert "evil␛]0;pwned␇␛[31mred" in piped.stdout and "\x1b" not in piped.stdout
    raw = _ask("--raw", "--base-url", instant.base_url, "--model", ESCAPED_MODEL, "reply 60 tokens")
    assert raw.returncode == 0 and ESCAPED_MODEL in raw.stdout  # --raw: the user's choice
    from tui.engine.store.database import Store

    with Store() as store:
        assert ESCAPED_MODEL in store.records(limit=1)[0]["reply_text"]  # stored exactly


def test_ctrl_c_cancels_keeping_the_partial_reply() -> None:
    import signal

    with demo("instant", decode_tokens_per_s=20.0) as server:
        process = subprocess.Popen(
            [sys.executable, "-m", "tui", "ask", "--base-url", server.base_url, "reply 200 tokens"],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ),
        )
        assert process.stdout is not None
        first = process.stdout.read1(65536)  # type: ignore[attr-defined]
        assert first  # the reply has started streaming
        process.send_signal(signal.SIGINT)
        rest, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "cancelled" in err.decode() and "Traceback" not in err.decode()
    assert len((first + rest).split()) < 200
    from tui.engine.store.database import Store

    with Store() as store:
        assert store.records(limit=1)[0]["status"] == "cancelled"
