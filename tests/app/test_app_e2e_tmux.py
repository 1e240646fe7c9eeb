"""End to end: the real `firsttoken` command in tmux against a local demo endpoint.

Types a question, presses Enter, and reads the reply and a TTFT figure from the captured pane.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
from helpers.tmux_app import Tmux

from tui.demo import DemoThread

REPO = Path(__file__).resolve().parents[2]
TTFT_IN_REPLY = re.compile(r"TTFT (\d+(?:\.\d+)?) (ms|s)\b")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        shutil.which("tmux") is None,
        reason="tmux is not installed (needed to drive a real terminal)",
    ),
]


def test_firsttoken_in_tmux_answers_and_shows_ttft(slow_demo: DemoThread, isolated_home: Path):
    tmux = Tmux()
    try:
        tmux.start_firsttoken(isolated_home, slow_demo.base_url)
        tmux.wait_for(lambda s: "enter send" in s and "/ 6,000" in s, 30, "the app to be ready")
        tmux.run("send-keys", "-t", tmux.session, "-l", "What is TTFT? reply 20 tokens")
        tmux.wait_for(lambda s: "reply 20 tokens" in s, 10, "the typed prompt")
        tmux.run("send-keys", "-t", tmux.session, "Enter")
        screen = tmux.wait_for(
            lambda s: TTFT_IN_REPLY.search(s) is not None, 30, "the reply's TTFT figure"
        )
        assert "you" in screen and "What is TTFT?" in screen
        assert "firsttoken demo reply" in screen  # the reply text itself
        value, unit = TTFT_IN_REPLY.search(screen).groups()  # type: ignore[union-attr]
        assert float(value) > 0 and unit in ("ms", "s")
        assert "long_generation" in screen or "short_qa" in screen  # the panel's class line
        chat = [r for r in slow_demo.requests if r["path"].endswith("/chat/completions")]
        assert len(chat) == 1
        assert chat[0]["messages"][-1]["content"] == "What is TTFT? reply 20 tokens"
        tmux.run("send-keys", "-t", tmux.session, "C-q")
    finally:
        tmux.kill()
    assert os.path.exists(isolated_home / "data" / "history.sqlite3")


def test_firsttoken_messages_file_opens_with_the_conversation(
    slow_demo: DemoThread, isolated_home: Path, tmp_path: Path
):
    conversation = tmp_path / "chat.json"
    conversation.write_text(
        json.dumps(
            [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Name a prime."},
                {"role": "assistant", "content": "Seven is prime."},
            ]
        )
    )
    tmux = Tmux()
    try:
        tmux.start_firsttoken(isolated_home, slow_demo.base_url, "--messages", str(conversation))
        screen = tmux.wait_for(
            lambda s: "Seven is prime." in s and "/ 6,000" in s, 30, "the loaded chat"
        )
        assert "You are terse." in screen and "Name a prime." in screen
        tmux.run("send-keys", "-t", tmux.session, "-l", "Another one?")
        tmux.wait_for(lambda s: "Another one?" in s, 10, "the typed prompt")
        tmux.run("send-keys", "-t", tmux.session, "Enter")
        tmux.wait_for(lambda s: TTFT_IN_REPLY.search(s) is not None, 30, "the reply")
        chat = [r for r in slow_demo.requests if r["path"].endswith("/chat/completions")]
        assert chat[-1]["message_count"] == 4
        tmux.run("send-keys", "-t", tmux.session, "C-q")
    finally:
        tmux.kill()


def _stable_capture(tmux: Tmux) -> str:
    """The pane with colours, once two captures 0.6 s apart agree (a blinking cursor or a
    toast fading out would otherwise differ between any two captures)."""
    previous = tmux.run("capture-pane", "-e", "-p", "-t", tmux.session)
    for _ in range(20):
        time.sleep(0.6)
        current = tmux.run("capture-pane", "-e", "-p", "-t", tmux.session)
        if current == previous:
            return current
        previous = current
    raise AssertionError("the pane never settled")


def _above_the_prompt(pane: str) -> str:
    """The rows above the prompt box (chat and panel): the prompt's cursor blinks, so its
    rows differ between any two captures whatever the painting does."""
    rows = pane.splitlines()
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", row) for row in rows]
    top = next(i for i, row in enumerate(plain) if "╭─ message" in row)
    return "\n".join(rows[:top])


def test_what_the_terminal_shows_after_streaming_equals_a_full_repaint(
    slow_demo: DemoThread, isolated_home: Path
):
    """The app paints incrementally (only what changed; containers asked for a layout are not
    repainted in full, see LayoutWithoutRepaint). If that ever left stale cells, the pane
    would differ from a full repaint, which ctrl+l forces (checked below on garbage)."""
    tmux = Tmux()
    try:
        tmux.start_firsttoken(isolated_home, slow_demo.base_url)
        tmux.wait_for(lambda s: "/ 6,000" in s, 30, "the app to be ready")
        # Two turns: the second reply scrolls the chat while it streams.
        for number, prompt in enumerate(["first, reply 60 tokens", "second, reply 160 tokens"]):
            tmux.run("send-keys", "-t", tmux.session, "-l", prompt)
            tmux.wait_for(lambda s, p=prompt: p in s, 10, "the typed prompt")
            tmux.run("send-keys", "-t", tmux.session, "Enter")
            tmux.wait_for(
                lambda s, n=number: len(TTFT_IN_REPLY.findall(s)) > n, 60, "the finished reply"
            )
        incremental = _above_the_prompt(_stable_capture(tmux))
        tmux.run("send-keys", "-t", tmux.session, "C-l")
        repainted = _above_the_prompt(_stable_capture(tmux))
        assert "second, reply 160 tokens" in repainted
        assert incremental == repainted
        # ctrl+l really repaints every cell: text written straight into the terminal goes.
        tty = tmux.run("display-message", "-p", "-t", tmux.session, "#{pane_tty}").strip()
        with open(tty, "w") as terminal:
            terminal.write("\x1b[12;12HSTALE-CELLS-HERE")
        tmux.wait_for(lambda s: "STALE-CELLS-HERE" in s, 10, "the stray text")
        tmux.run("send-keys", "-t", tmux.session, "C-l")
        tmux.wait_for(lambda s: "STALE-CELLS-HERE" not in s, 10, "the redraw")
        tmux.run("send-keys", "-t", tmux.session, "C-q")
    finally:
        tmux.kill()


def test_keys_typed_while_the_app_starts_reach_the_prompt(
    slow_demo: DemoThread, isolated_home: Path
):
    # Typed at once, while Python still imports: read with the terminal's first input, before
    # the app's own start-up has focused the prompt (else they would go to the chat log, lost).
    tmux = Tmux()
    try:
        tmux.start_firsttoken(isolated_home, slow_demo.base_url)
        tmux.run("send-keys", "-t", tmux.session, "-l", "typed early")
        screen = tmux.wait_for(
            lambda s: "enter send" in s and "/ 6,000" in s, 30, "the app to be ready"
        )
        prompt = screen[screen.index("message") :]  # the prompt's box, at the bottom
        assert "typed early" in prompt, screen
        tmux.run("send-keys", "-t", tmux.session, "C-q")
    finally:
        tmux.kill()
