"""A whole headless session with a unique key: nothing firsttoken writes (every file under
FIRSTTOKEN_HOME, every byte on stdout and stderr) holds the key, in the environment, in the
base_url's query or in its userinfo."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers.cli import ROOT
from helpers.fault_server import FaultServer
from helpers.secrets import assert_key_nowhere

pytestmark = pytest.mark.e2e


def test_a_session_never_writes_the_key(isolated_home: Path, tmp_path: Path) -> None:
    key = f"sk-test-{uuid.uuid4()}"
    config = tmp_path / "config.toml"
    config.write_text('[llm]\nmax_retries = 0\nmodel = "session-model"\n')
    env = {**os.environ, "FIRSTTOKEN_API_KEY": key}
    written: list[bytes] = []

    def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        done = subprocess.run(
            [sys.executable, "-m", "tui", "--config", str(config), *args],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
        )
        written.extend((done.stdout, done.stderr))
        return done

    with FaultServer() as server:
        healthy = server.url("healthy", "s")
        assert run("--base-url", healthy, "ask", "hello").returncode == 0
        assert run("--base-url", healthy, "ask", "--json", "hello").returncode == 0
        assert run("--base-url", healthy, "bench", "--runs", "1", "hi").returncode == 0
        sweep = ["sweep", "--lengths", "40,80", "--runs", "1", "--max-tokens", "4"]
        assert run("--base-url", healthy, *sweep).returncode == 0
        assert run("--base-url", healthy, "check", "--runs", "1").returncode in (0, 1)
        refused = run("--base-url", server.url("401", "s"), "ask", "hi")
        assert refused.returncode == 1 and b"the key was refused (sk-" in refused.stderr
        in_query = f"{server.url('404-api', 's')}?api-key={key}"
        missing = run("--base-url", in_query, "ask", "hi")
        # The 404 names the URL asked, without its query (the query may hold a key).
        assert missing.returncode == 1 and b"/404-api/s/v1/chat/completions:" in missing.stderr
        host = healthy.removeprefix("http://")
        assert run("--base-url", f"http://user:{key}@{host}", "ask", "hi").returncode == 0
        assert run("--base-url", in_query, "config").returncode == 0
        assert run("config").returncode == 0
        for listing in (["--chats"], [], ["--json"], ["--otel"], ["--chat", "1", "--conversation"]):
            assert run("history", *listing).returncode == 0
        sent = [headers.get("authorization", "") for _, _, headers in server.requests]
    assert f"Bearer {key}" in sent  # the key did go where it belongs: to the server

    forms = {key.encode(), quote(key, safe="").encode(), f"api-key={key}".encode()}
    assert_key_nowhere(forms, written, isolated_home)
    # Everything firsttoken created there is the owner's alone.
    for path in isolated_home.rglob("*"):
        assert path.stat().st_mode & 0o077 == 0, (path, oct(path.stat().st_mode))
