"""The app through a whole run with a unique key (a reply, a refused key, the key in the
base_url's userinfo and in its query, the chat reopened, the history exported afterwards):
no byte written to the terminal (recorded with tmux's `pipe-pane`) and no file under
FIRSTTOKEN_HOME (history, its drafts, preferences, prompt history) holds the key."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers.cli import ROOT
from helpers.fault_server import FaultServer
from helpers.secrets import assert_key_nowhere
from helpers.tmux_app import TmuxApp

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        shutil.which("tmux") is None,
        reason="tmux is not installed (needed to drive a real terminal)",
    ),
]


@pytest.fixture(scope="module")
def faults() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


def ready(screen: str) -> bool:
    return "enter send" in screen and "/ 6,000" in screen


def _session(
    tmp_path: Path, home: Path, key: str, base_url: str, wanted: str, *args: str
) -> tuple[bytes, str]:
    """One run of the app: send a message, wait for `wanted` on screen, quit. Its bytes, its
    last screen."""
    app = TmuxApp(tmp_path)
    try:
        app.start(home, "--base-url", base_url, *args, env={"FIRSTTOKEN_API_KEY": key})
        app.wait_for(ready, 60, "the app to be ready")
        app.keys("is my key safe?", literal=True)
        app.wait_for(lambda s: "is my key safe?" in s, 10, "the typed prompt")
        app.keys("Enter")
        screen = app.wait_for(lambda s: wanted in s, 30, repr(wanted))
        app.keys("C-q")
        assert app.exit_code() == 0
        return app.raw_bytes(), screen
    finally:
        app.kill_server()


def test_an_app_session_never_writes_the_key(
    faults: FaultServer, isolated_home: Path, tmp_path: Path
) -> None:
    key = f"sk-test-{uuid.uuid4()}"
    written: list[bytes] = []

    raw, _ = _session(tmp_path, isolated_home, key, faults.url("healthy", "a"), "All is well")
    written.append(raw)
    raw, screen = _session(tmp_path, isolated_home, key, faults.url("401", "a"), "key was refused")
    written.append(raw)
    assert f"sk-…{key[-4:]}" in screen  # the refused key is named, masked
    host = faults.url("healthy", "b").removeprefix("http://")
    raw, screen = _session(tmp_path, isolated_home, key, f"http://user:{key}@{host}", "All is well")
    written.append(raw)
    in_query = f"{faults.url('404-api', 'a')}?api-key={key}"
    raw, _ = _session(tmp_path, isolated_home, key, in_query, "404", "--resume")
    written.append(raw)
    env = {**os.environ, "FIRSTTOKEN_API_KEY": key}
    for listing in (["--chats"], [], ["--json"], ["--otel"], ["--chat", "1", "--conversation"]):
        done = subprocess.run(
            [sys.executable, "-m", "tui", "history", *listing],
            cwd=ROOT,
            env=env,
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        written.extend((done.stdout, done.stderr))
    sent = [headers.get("authorization", "") for _, _, headers in faults.requests]
    assert f"Bearer {key}" in sent  # the key did go where it belongs: to the server

    forms = {key.encode(), quote(key, safe="").encode(), key[8:].encode()}
    assert all(len(output) for output in written[:4])
    assert_key_nowhere(forms, written, isolated_home)
