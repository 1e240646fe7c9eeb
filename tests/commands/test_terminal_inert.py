"""What reaches the terminal holds no control sequence from server text: the raw bytes of real
commands on a pseudo-terminal, directly and through a pipe (`| cat`), for a hostile reply
(OSC 52, OSC 0/2, CSI 2J, cursor moves, DCS, 8-bit C1), a hostile error body, a hostile model
id (stored, then listed by `history`) and bench's table of errors."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.fault_server import HOSTILE, FaultServer
from helpers.terminal import controls, on_a_terminal

pytestmark = pytest.mark.e2e

SHOWN = "copy␛]52;c;aGFja2Vk␇ title␛]0;owned␇"  # how the reply's start looks, inert


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    with FaultServer() as running:
        yield running


def test_a_hostile_reply_on_a_terminal(server) -> None:
    code, screen = on_a_terminal(["ask", "--base-url", server.url("esc-reply", "pty"), "hi"])
    assert code == 0, screen
    assert controls(screen) == []
    assert SHOWN in screen.decode() and "c1\\x9b2J\\x9d0;c1\\x9c end" in screen.decode()


def test_a_hostile_reply_through_a_pipe(server) -> None:
    ask = [sys.executable, "-m", "tui", "ask", "--base-url", server.url("esc-reply", "pipe"), "hi"]
    code, screen = on_a_terminal([shlex.join(ask) + " | cat"], shell=True)
    assert code == 0, screen
    assert controls(screen) == [] and SHOWN in screen.decode()


def test_raw_is_the_users_explicit_choice(server) -> None:
    code, screen = on_a_terminal(
        ["ask", "--raw", "--base-url", server.url("esc-reply", "raw"), "hi"]
    )
    assert code == 0 and HOSTILE.split(" ")[0].encode() in screen  # unchanged, as asked


@pytest.fixture
def no_retries(tmp_path: Path) -> str:
    """A config without retries: the server's one failure is what the user sees."""
    path = tmp_path / "config.toml"
    path.write_text("[llm]\nmax_retries = 0\n")
    return str(path)


def test_a_hostile_error_body(server, no_retries: str) -> None:
    code, screen = on_a_terminal(
        ["ask", "--config", no_retries, "--base-url", server.url("esc-error", "pty"), "hi"]
    )
    assert code == 1
    assert controls(screen) == []
    assert "server error HTTP 500" in screen.decode() and "␛]52;c;" in screen.decode()


def test_bench_table_with_hostile_errors(server, no_retries: str) -> None:
    url = server.url("esc-error", "bench")
    code, screen = on_a_terminal(
        # No warm-up: the server fails only the first request, the one the table must show.
        ["bench", "--config", no_retries, "--runs", "1", "--warmup", "0", "--base-url", url, "hi"]
    )
    assert code == 1  # one of the four requests failed
    assert controls(screen) == []
    assert "untrimmed, streamed: server error HTTP 500" in screen.decode()


def test_history_lists_a_hostile_model_id_and_title_inert(server) -> None:
    hostile_model = "evil\x1b]0;owned\x07\x9b2J"
    code, _ = on_a_terminal(
        ["ask", "--base-url", server.url("healthy", "h"), "--model", hostile_model, HOSTILE]
    )
    assert code == 0
    for listing in (["history"], ["history", "--chats"], ["history", "--json"]):
        code, screen = on_a_terminal(listing)
        assert code == 0 and controls(screen) == [], listing
        assert "evil" in screen.decode()


def test_ask_json_on_a_terminal_is_exact_and_inert(server) -> None:
    import json

    code, screen = on_a_terminal(
        ["ask", "--json", "--base-url", server.url("esc-reply", "j"), "hi"]
    )
    assert code == 0 and controls(screen) == []
    (line,) = [row for row in screen.decode().splitlines() if row.startswith("{")]
    assert json.loads(line)["reply"] == HOSTILE  # JSON escapes: the value is exact
