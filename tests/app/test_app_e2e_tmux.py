"""End to end: the real `firsttoken` command in tmux against a local demo endpoint.

Types a question, presses Enter, and reads the reply and a TTFT figure from the captured pane.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tui.demo import DemoThread, start_demo_in_thread
from tui.demo.latency_model import latency_model

REPO = Path(__file__).resolve().parents[2]
TTFT_IN_REPLY = re.compile(r"TTFT (\d+(?:\.\d+)?) (ms|s)\b")

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (needed to drive a real terminal)"
)


class Tmux:
    """One tmux server on its own socket, so the test never touches the user's sessions."""

    def __init__(self) -> None:
        self.socket = f"firsttoken-test-{uuid.uuid4().hex[:8]}"
        self.session = "app"

    def run(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        return done.stdout

    def capture(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.session)

    def wait_for(self, check: Callable[[str], bool], timeout: float, what: str) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.capture()
            if check(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; the pane showed:\n{screen}")

    def start_firsttoken(self, home: Path, base_url: str, *args: str) -> None:
        """`firsttoken --base-url URL ARGS` in a 120x40 pane, with its own FIRSTTOKEN_HOME."""
        command = (
            # COLUMNS/LINES from the test runner would override the pane size inside the app.
            f"cd {REPO} && env -u COLUMNS -u LINES FIRSTTOKEN_HOME={home} "
            f"{sys.executable} -m tui --base-url {base_url} {' '.join(args)}; "
            "sleep 60"  # keep the pane after exit so a failure can still be read
        )
        self.run(
            "new-session", "-d", "-s", self.session, "-x", "120", "-y", "40",
            "-e", f"FIRSTTOKEN_HOME={home}", command,
        )  # fmt: skip
        # A fresh tmux server without clients may fall back to 80x24: pin the size.
        self.run("set-option", "-t", self.session, "window-size", "manual")
        self.run("resize-window", "-t", self.session, "-x", "120", "-y", "40")

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def endpoint() -> Iterator[DemoThread]:
    thread = start_demo_in_thread(latency_model("cpu-small"))
    try:
        yield thread
    finally:
        thread.stop()


def test_firsttoken_in_tmux_answers_and_shows_ttft(endpoint: DemoThread, isolated_home: Path):
    tmux = Tmux()
    try:
        tmux.start_firsttoken(isolated_home, endpoint.base_url)
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
        chat = [r for r in endpoint.requests if r["path"].endswith("/chat/completions")]
        assert len(chat) == 1
        assert chat[0]["messages"][-1]["content"] == "What is TTFT? reply 20 tokens"
        tmux.run("send-keys", "-t", tmux.session, "C-q")
    finally:
        tmux.kill()
    assert os.path.exists(isolated_home / "data" / "history.sqlite3")


def test_firsttoken_messages_file_opens_with_the_conversation(
    endpoint: DemoThread, isolated_home: Path, tmp_path: Path
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
        tmux.start_firsttoken(isolated_home, endpoint.base_url, "--messages", str(conversation))
        screen = tmux.wait_for(
            lambda s: "Seven is prime." in s and "/ 6,000" in s, 30, "the loaded chat"
        )
        assert "You are terse." in screen and "Name a prime." in screen
        tmux.run("send-keys", "-t", tmux.session, "-l", "Another one?")
        tmux.wait_for(lambda s: "Another one?" in s, 10, "the typed prompt")
        tmux.run("send-keys", "-t", tmux.session, "Enter")
        tmux.wait_for(lambda s: TTFT_IN_REPLY.search(s) is not None, 30, "the reply")
        chat = [r for r in endpoint.requests if r["path"].endswith("/chat/completions")]
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
    endpoint: DemoThread, isolated_home: Path
):
    """The app paints incrementally (only what changed; containers asked for a layout are not
    repainted in full, see LayoutWithoutRepaint). If that ever left stale cells, the pane
    would differ from a full repaint, which ctrl+l forces (checked below on garbage)."""
    tmux = Tmux()
    try:
        tmux.start_firsttoken(isolated_home, endpoint.base_url)
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
    endpoint: DemoThread, isolated_home: Path
):
    # Typed at once, while Python still imports: read with the terminal's first input, before
    # the app's own start-up has focused the prompt (else they would go to the chat log, lost).
    tmux = Tmux()
    try:
        tmux.start_firsttoken(isolated_home, endpoint.base_url)
        tmux.run("send-keys", "-t", tmux.session, "-l", "typed early")
        screen = tmux.wait_for(
            lambda s: "enter send" in s and "/ 6,000" in s, 30, "the app to be ready"
        )
        prompt = screen[screen.index("message") :]  # the prompt's box, at the bottom
        assert "typed early" in prompt, screen
        tmux.run("send-keys", "-t", tmux.session, "C-q")
    finally:
        tmux.kill()
