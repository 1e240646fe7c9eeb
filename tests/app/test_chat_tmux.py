"""The chat's keys and reasoning in a real terminal: `firsttoken` in tmux against demo
endpoints. Ctrl+J typed ahead of text lands in order; the thinking streams and collapses and
Ctrl+F opens it; a model picked with F2 stays with the endpoint it was picked on."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.tmux_app import Tmux
from test_app_e2e_tmux import TTFT_IN_REPLY

from tui.demo import DemoThread

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        shutil.which("tmux") is None,
        reason="tmux is not installed (needed to drive a real terminal)",
    ),
]
READY = "/ 6,000"  # the budget gauge: counted, so connected


def keys(tmux: Tmux, *names: str) -> None:
    tmux.run("send-keys", "-t", tmux.session, *names)


def header(screen: str) -> str:
    return screen.splitlines()[0] if screen else ""


def test_ctrl_j_typed_ahead_lands_in_order(slow_demo: DemoThread, isolated_home: Path) -> None:
    tmux = Tmux()
    try:
        tmux.start_firsttoken(isolated_home, slow_demo.base_url)
        tmux.wait_for(lambda s: READY in s, 30, "the app to be ready")
        keys(tmux, "abc", "C-j", "def", "C-j", "ghi")
        screen = tmux.wait_for(lambda s: "ghi" in s, 10, "the typed lines")
        # The prompt's rows: " │ abc    │ ▊ panel…": the text between its borders.
        typed = [
            line.split("│")[1].strip() for line in screen.splitlines() if line.startswith(" │")
        ]
        assert typed == ["abc", "def", "ghi"]
        keys(tmux, "Enter")
        tmux.wait_for(lambda s: TTFT_IN_REPLY.search(s) is not None, 30, "the reply")
        chat = [r for r in slow_demo.requests if r["path"].endswith("/chat/completions")]
        assert chat[-1]["messages"][-1]["content"] == "abc\ndef\nghi"
        keys(tmux, "C-q")
    finally:
        tmux.kill()


def test_thinking_collapses_and_ctrl_f_opens_it(slow_demo: DemoThread, isolated_home: Path) -> None:
    tmux = Tmux()
    try:
        tmux.start_firsttoken(
            isolated_home, slow_demo.base_url, "--model firsttoken-demo-reasoning"
        )
        tmux.wait_for(lambda s: READY in s, 30, "the app to be ready")
        keys(tmux, "-l", "Why is the sky blue?")
        tmux.wait_for(lambda s: "sky blue?" in s, 10, "the typed prompt")
        keys(tmux, "Enter")
        tmux.wait_for(lambda s: "thinking…" in s, 30, "the thinking streaming")
        screen = tmux.wait_for(lambda s: "ctrl+f shows it" in s, 30, "the thinking collapsed")
        assert "The user sent 1 message" not in screen  # collapsed: one line
        tmux.wait_for(lambda s: TTFT_IN_REPLY.search(s) is not None, 30, "the reply's figures")
        keys(tmux, "C-f")
        screen = tmux.wait_for(lambda s: "ctrl+f hides it" in s, 10, "the thinking opened")
        assert "The user sent 1 message" in screen
        keys(tmux, "C-q")
    finally:
        tmux.kill()


def test_a_picked_model_stays_with_its_endpoint(
    slow_demo: DemoThread, demo: DemoThread, isolated_home: Path
) -> None:
    picked = "firsttoken-demo-reasoning"
    for base_url, expected in (
        (slow_demo.base_url, None),  # pick it here
        (demo.base_url, "gpt-4o-mini"),  # another slow_demo: the configured model
        (slow_demo.base_url, picked),  # back here: the pick
    ):
        tmux = Tmux()
        try:
            tmux.start_firsttoken(isolated_home, base_url)
            screen = tmux.wait_for(lambda s: READY in s, 30, "the app to be ready")
            if expected is None:
                keys(tmux, "F2")
                tmux.wait_for(lambda s: "Switch model" in s, 10, "the model picker")
                keys(tmux, "-l", picked)
                keys(tmux, "Enter")
                tmux.wait_for(lambda s: picked in header(s), 10, "the picked model in the header")
            else:
                screen = tmux.wait_for(lambda s, e=expected: e in header(s), 10, expected)
                other = "gpt-4o-mini" if expected == picked else picked
                assert other not in header(screen)
            keys(tmux, "C-q")
        finally:
            tmux.kill()
