"""`firsttoken --race A B` in a real terminal (tmux) against the demo endpoint: the race opens
over the chat, a message races both targets in their own columns, the scoreboard names the
first, and F12 goes back to the chat."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from helpers.tmux_app import Tmux

from tui.demo import DemoThread

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        shutil.which("tmux") is None,
        reason="tmux is not installed (needed to drive a real terminal)",
    ),
]
FAST, SLOW = "demo-h100-70b", "demo-cpu-small"


def test_firsttoken_race_in_tmux(demo: DemoThread, isolated_home: Path) -> None:
    tmux = Tmux()
    try:
        tmux.start_firsttoken(isolated_home, demo.base_url, "--race", FAST, SLOW)
        tmux.wait_for(lambda s: "message to every target" in s, 60, "the race screen")
        tmux.run("send-keys", "-t", tmux.session, "-l", "first to answer, reply 8 tokens")
        tmux.run("send-keys", "-t", tmux.session, "Enter")
        # Each lane's counter and its reply's border say TTFT once the round is scored; the
        # scoreboard and the borders are separate repaints, so wait for the frame with all.
        screen = tmux.wait_for(
            lambda s: "round 1:" in s and s.count("TTFT") >= 4, 60, "the first round scored"
        )
        # Who is first on so short a prompt is the machine's to say: the verdicts are tested
        # with prompts long enough to decide (tests/commands/test_race_cli.py).
        assert re.search(rf"round 1: ({FAST}|{SLOW}) first by \d", screen), screen
        chat = [r for r in demo.requests if r["path"].endswith("/chat/completions")]
        assert [r["model"] for r in chat] == [FAST, SLOW]
        tmux.run("send-keys", "-t", tmux.session, "F12")
        tmux.wait_for(lambda s: "enter send" in s, 20, "the chat again")
        tmux.run("send-keys", "-t", tmux.session, "C-q")
    finally:
        tmux.kill()
