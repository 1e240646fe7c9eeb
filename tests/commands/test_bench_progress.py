"""bench, sweep and check say which request is under way on a terminal (a line rewritten in
place, with no escape sequence), and never when stderr is not a terminal or with --json."""

from __future__ import annotations

import pytest
from helpers.cli import firsttoken
from helpers.client import demo
from helpers.terminal import controls, on_a_terminal

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def instant():
    with demo("instant") as server:
        yield server


def test_a_terminal_sees_each_request_under_way(instant) -> None:
    code, screen = on_a_terminal(
        ["sweep", "--base-url", instant.base_url, "--lengths", "100,200", "--runs", "1"]
    )
    assert code == 0
    text = screen.decode()
    # The warm-up and both lengths, each drawn as it starts (before any figure is known).
    for n, label in enumerate(("warm-up", "100 tokens", "200 tokens"), start=1):
        assert f"\r  {label}: request {n} of 3, 0 s so far (Ctrl+C stops)" in text
    assert controls(screen) == []  # carriage returns and spaces only
    # Each live line is cleared before the line that reports the request.
    assert "\r  100 tokens: TTFT" in text and "so far (Ctrl+C stops)  100 tokens: TTFT" not in text


def test_check_on_a_terminal_with_json_shows_no_live_line(instant) -> None:
    code, screen = on_a_terminal(
        ["check", "--base-url", instant.base_url, "--runs", "1", "--json"]
    )
    assert code == 0 and "so far" not in screen.decode()


def test_no_live_line_when_stderr_is_not_a_terminal(instant) -> None:
    done = firsttoken("bench", "--base-url", instant.base_url, "--runs", "1", "hi")
    assert done.returncode == 0, done.stderr
    assert "so far" not in done.stderr and "\r" not in done.stderr
    assert done.stderr.count("TTFT") == 4  # the lines per request, as before
