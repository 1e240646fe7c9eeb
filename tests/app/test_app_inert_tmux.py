"""The real `firsttoken` in tmux, every byte it writes recorded with `pipe-pane`, while the
fault server answers with escape sequences (OSC 52, OSC 0/2, CSI 2J, cursor moves, DCS, 8-bit
C1) in a reply, in an error body and in a model id: none of them reaches the terminal live.
The pane shows them as visible stand-ins, the window title and tmux's clipboard are untouched,
and the only clipboard write is F7's, holding what the user saw."""

from __future__ import annotations

import base64
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.fault_server import FaultServer
from helpers.tmux_app import TmuxApp

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        shutil.which("tmux") is None,
        reason="tmux is not installed (needed to drive a real terminal)",
    ),
]

# HOSTILE's sequences with the text the server put right before them: Textual moves the cursor
# and clears the screen itself, never right after these words.
SERVER_SEQUENCES = (
    b"copy\x1b]52;c;aGFja2Vk",
    b"\x1b]0;owned",
    b"\x1b]2;owned",
    b"clear\x1b[2J",
    b"move\x1b[10;10H",
    b"\x1b[3A\x1b7\x1b8",
    b"dcs\x1bP",
    "\x9b2J".encode(),
    "\x9d0;c1".encode(),
)
C1_AS_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")
CLIPBOARD_WRITE = re.compile(rb"\x1b\]52;c;([A-Za-z0-9+/=]*)(?:\x07|\x1b\\)")


@pytest.fixture(scope="module")
def faults() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


def ready(screen: str) -> bool:
    return "enter send" in screen and "/ 6,000" in screen


def _send(app: TmuxApp, text: str) -> None:
    app.keys(text, literal=True)
    app.wait_for(lambda s: text in s, 10, f"the typed {text!r}")
    app.keys("Enter")


def test_server_escape_sequences_never_reach_the_terminal(
    faults: FaultServer, isolated_home: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[llm]\nmax_retries = 0\n")
    base_url = faults.url("esc-reply+esc-error+esc-model", "tmux")
    app = TmuxApp(tmp_path)
    try:
        app.start(isolated_home, "--config", str(config), "--base-url", base_url)
        app.wait_for(ready, 60, "the app to be ready")
        _send(app, "first question")
        app.wait_for(lambda s: "copy␛]52;c;aGFja2Vk␇" in s, 30, "the hostile reply, inert")
        _send(app, "second question")
        app.wait_for(lambda s: "boom copy␛]52" in s, 30, "the hostile error body, inert")
        _send(app, "third question")
        app.wait_for(lambda s: "All is well here." in s, 30, "the reply naming a hostile model")
        app.keys("F2")
        app.wait_for(lambda s: "Switch model" in s and "evilcopy␛]52" in s, 10, "the picker")
        app.keys("evil", literal=True)
        app.keys("Enter")
        app.wait_for(lambda s: "Switch model" not in s, 10, "the picker to close")
        app.wait_for(lambda s: "model: evilcopy␛]52" in s, 10, "the chosen model's toast")
        app.keys("Escape")
        app.keys("F7")  # copy the last reply
        app.wait_for(lambda s: "copied the last reply" in s, 10, "the copy")
        app.keys("C-q")
        assert app.exit_code() == 0
        title = app.tmux("display-message", "-p", "-t", app.session, "#{pane_title}")
        buffers = app.tmux("list-buffers", "-F", "#{buffer_name}").split()
        clipboard = [app.tmux("show-buffer", "-b", name) for name in buffers]
        raw = app.raw_bytes()
    finally:
        app.kill_server()
    assert [chat for _m, chat, _h in faults.requests if chat.endswith("/chat/completions")]
    assert len(raw) > 10_000  # the whole run was recorded
    assert [s for s in SERVER_SEQUENCES if s in raw] == []
    assert C1_AS_UTF8.search(raw) is None
    assert "owned" not in title
    assert all("hacked" not in text for text in clipboard)
    # The one clipboard write is F7's: the reply as it was shown, no escape sequence in it.
    copies = [base64.b64decode(data).decode() for data in CLIPBOARD_WRITE.findall(raw)]
    assert copies == ["All is well here."]
