"""`ask` on a terminal shows a llama.cpp server's progress through the prompt on one stderr
line, rewritten in place and cleared before the reply, and nowhere else: not on a pipe, not in
--json's stdout (the real command on a pseudo-terminal, against the demo playing llama-server
with a slow prefill)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from helpers.cli import firsttoken
from helpers.client import demo
from helpers.terminal import on_a_terminal

from tui.demo import DemoThread

pytestmark = pytest.mark.e2e

PROMPT = "long prompt " * 900 + "then reply 6 tokens"


@pytest.fixture(scope="module")
def slow_prefill() -> Iterator[DemoThread]:
    with demo(server="llamacpp", prefill_ms_per_token=1.0) as server:
        yield server


def ask(server: DemoThread, *extra: str) -> list[str]:
    return ["ask", "--provider", "llamacpp", "--base-url", server.base_url, *extra, PROMPT]


def test_a_terminal_sees_the_prefill_then_the_reply(slow_prefill: DemoThread) -> None:
    code, screen = on_a_terminal(ask(slow_prefill))
    text = screen.decode()
    entry = slow_prefill.requests[-1]
    assert code == 0 and entry["return_progress"] is True and entry["progress_chunks"] >= 3
    lines = [part for part in text.split("\r\x1b[2K") if part.startswith("prefill ")]
    assert len(lines) == entry["progress_chunks"]
    assert lines[0].startswith("prefill 0 of ")
    assert all(" tokens (" in line and "%)" in line for line in lines)
    assert any("first token in ~" in line and " tok/s" in line for line in lines)
    # The last progress line is cleared before the reply's text.
    reply_at = text.index("demo reply")
    assert text.rindex("\r\x1b[2K") < reply_at
    assert "prefill " not in text[reply_at:].split("TTFT")[0]


def test_a_pipe_and_json_get_no_progress_line(slow_prefill: DemoThread) -> None:
    piped = firsttoken(*ask(slow_prefill))
    assert piped.returncode == 0, piped.stderr
    assert "\r" not in piped.stderr and " of " not in piped.stderr.split("TTFT")[0]
    as_json = firsttoken(*ask(slow_prefill, "--json"))
    payload = json.loads(as_json.stdout)
    assert as_json.returncode == 0 and "\r" not in as_json.stderr
    assert len(payload["prompt_progress"]) == slow_prefill.requests[-1]["progress_chunks"]
