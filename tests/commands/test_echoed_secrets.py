"""A server that echoes the request back in its error body (the request line with its query,
the Authorization header) cannot make firsttoken show or keep the credentials it sent: not on
stderr, not in `ask --json`, not in the history or `history --json`, whole or cut."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import ROOT
from helpers.raw_server import raw_server_in_thread, response
from helpers.secrets import assert_key_nowhere

pytestmark = pytest.mark.e2e

PASSWORD = "pw-LEAK-7741"
QUERY_SECRET = "SECRETVALUE123456"


def echo(head: bytes, _body: bytes) -> list[bytes]:
    # What some proxies' errors quote: the user and the Authorization header they were given,
    # or the request line, its query included.
    request_line, *headers = head.split(b"\r\n")
    basic = [line for line in headers if line.lower().startswith(b"authorization: basic ")]
    if basic:
        user = base64.b64decode(basic[0].split(b" ")[-1])
        said = b"denied for " + user + b" (" + basic[0] + b")"
    else:
        said = b"could not route: " + request_line
    return [response("502 Bad Gateway", said, "Content-Type: text/plain")]


def test_credentials_echoed_in_an_error_are_masked_everywhere(isolated_home: Path) -> None:
    written: list[bytes] = []
    env = {k: v for k, v in os.environ.items() if k not in ("FIRSTTOKEN_API_KEY",)}

    def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        done = subprocess.run(
            [sys.executable, "-m", "tui", *args],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
        )
        written.extend((done.stdout, done.stderr))
        return done

    with raw_server_in_thread(echo) as server:
        with_user = f"http://usr:{PASSWORD}@127.0.0.1:{server.port}/v1"
        # The 502 line shows 120 characters of the body: the cut falls inside the secret.
        with_query = f"http://127.0.0.1:{server.port}/v1?pad={'p' * 60}&key={QUERY_SECRET}"
        for url in (with_user, with_query):
            plain = run("--base-url", url, "ask", "hi")
            as_json = run("--base-url", url, "ask", "--json", "hi")
            assert plain.returncode == 1 and b"server error HTTP 502" in plain.stderr
            assert as_json.returncode == 1 and b'"kind": "server"' in as_json.stdout
        sent = server.requests[0][0]
    assert base64.b64encode(f"usr:{PASSWORD}".encode()) in sent  # Basic credentials were sent
    assert run("history", "--json").returncode == 0
    forms = {
        PASSWORD.encode(),
        base64.b64encode(f"usr:{PASSWORD}".encode()),
        QUERY_SECRET[:6].encode(),  # no cut-off start of it either
    }
    assert_key_nowhere(forms, written, isolated_home)
