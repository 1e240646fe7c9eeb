"""Every argument error is one line naming the flag (or command) and the fix, exit 2, without
argparse's usage block; `--help` still prints the usage. Through the real command."""

from __future__ import annotations

import json

import pytest
from helpers.cli import firsttoken

from tui.cli import COMMANDS, DISPATCH, build_parser

pytestmark = pytest.mark.e2e

CASES = [
    (("ask", "--model"), "ask: --model needs a value after it (e.g. --model NAME)"),
    (("ask", "--budget", "-5", "hi"), "ask: --budget: expected a whole number above 0, got -5"),
    (("bench", "--runs", "abc"), "bench: --runs: expected a whole number above 0, got 'abc'"),
    (("history", "--limit", "0"), "history: --limit: expected a whole number above 0, got 0"),
    (("check", "--warmup", "-1"), "check: --warmup: expected a whole number, 0 or more, got -1"),
    (("demo-server", "--port", "70000"), "--port: expected a whole number from 0 to 65535"),
    (("ask", "--bogus-flag"), "ask: unknown flag --bogus-flag (`firsttoken ask --help` lists"),
    (("--bogus",), "unknown flag --bogus (`firsttoken --help` lists them)"),
    (("ask", "why", "not"), "ask: unexpected 'not' after the prompt: quote the prompt"),
    (("bogus",), "unknown command 'bogus': expected one of ask, bench, sweep, check"),
    (("config", "nope"), "config: unexpected 'nope': expected init"),
    (("history", "--chat", "1", "--chats"), "--chats and --chat cannot be used together"),
    (("ask", "--stream=yes", "hi"), "ask: --stream/--no-stream takes no value: drop =yes"),
    (("--resume", "abc"), "--resume: expected a whole number above 0, got 'abc'"),
]


@pytest.mark.parametrize(("args", "says"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_an_argument_error_is_one_line_naming_the_flag(args: tuple[str, ...], says: str) -> None:
    result = firsttoken(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("firsttoken: error: ") and says in line
    assert "usage:" not in result.stderr


def test_ask_json_still_gets_its_one_object() -> None:
    result = firsttoken("ask", "--json", "--max-tokens")
    assert result.returncode == 2
    payload = json.loads(result.stdout)
    assert payload["error"] == {
        "kind": "usage",
        "message": "ask: --max-tokens needs a value after it (e.g. --max-tokens N)",
    }
    assert len(result.stderr.splitlines()) == 1


def test_help_still_prints_the_usage() -> None:
    result = firsttoken("history", "--help")
    assert result.returncode == 0 and result.stdout.startswith("usage: firsttoken history")


def test_every_subcommand_has_its_entry_in_the_dispatch_table() -> None:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]  # the subparsers action
    assert set(sub.choices) == set(COMMANDS) == set(DISPATCH) - {None}
