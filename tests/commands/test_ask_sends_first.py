"""`firsttoken ask` sends its request before it imports anything heavy: no tiktoken (the count
comes after the reply), no openai, no Textual. Checked without any clock: an audit hook in the
real `ask` process notes, in order, every module imported and every socket connected, and the
first connection to the server must come before tiktoken is imported (and openai and Textual
never are)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.client import demo

pytestmark = pytest.mark.e2e

PROBE = r"""
import json, sys
events = []

def hook(event, args):
    if event == "import":
        events.append(("import", args[0]))
    elif event == "socket.connect" and len(args) > 1 and isinstance(args[1], tuple):
        events.append(("connect", f"{args[1][0]}:{args[1][1]}"))

sys.addaudithook(hook)
from tui.cli import main

try:
    code = main(sys.argv[2:])
finally:
    with open(sys.argv[1], "w") as out:
        json.dump(events, out)
sys.exit(code)
"""


def ask_events(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list]:
    trace = tmp_path / "trace.json"
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(trace), "ask", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result, json.loads(trace.read_text())


def first(events: list, kind: str, prefix: str) -> int | None:
    for index, (event, name) in enumerate(events):
        if event == kind and (name == prefix or name.startswith(prefix)):
            return index
    return None


@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_ask_connects_before_importing_tiktoken_openai_or_textual(
    tmp_path: Path, stream: str
) -> None:
    with demo("instant") as server:
        endpoint = f"127.0.0.1:{server.port}"
        result, events = ask_events(
            tmp_path, "--base-url", server.base_url, "--model", "m", stream, "hi, reply 3 tokens"
        )
    assert result.returncode == 0, result.stderr
    connected = first(events, "connect", endpoint)
    tiktoken = first(events, "import", "tiktoken")
    assert connected is not None
    # The vocabulary is loaded after the reply, to count the prompt for the record...
    assert tiktoken is not None and connected < tiktoken
    # ...and the heavy libraries of before never load at all.
    assert first(events, "import", "openai") is None
    assert first(events, "import", "textual") is None
    assert first(events, "import", "httpx") is None


def test_a_conversation_over_the_budget_is_counted_before_it_is_sent(tmp_path: Path) -> None:
    # Trimming needs the count: here the vocabulary comes first, as it must.
    long = tmp_path / "long.json"
    long.write_text(json.dumps([{"role": "user", "content": "word " * 400}]))
    with demo("instant") as server:
        endpoint = f"127.0.0.1:{server.port}"
        result, events = ask_events(
            tmp_path, "--base-url", server.base_url, "--model", "m", "--budget", "100",
            "--messages", str(long), "and now, reply 3 tokens",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    tiktoken, connected = first(events, "import", "tiktoken"), first(events, "connect", endpoint)
    assert tiktoken is not None and connected is not None and tiktoken < connected
