"""`ask` against a server that refuses the prompt as over its context: the hint says what is
true of that prompt, through the real command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import firsttoken
from helpers.client import demo, fault_url

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def instant():
    with demo("instant") as server:
        yield server


def test_a_nine_token_prompt_is_not_said_to_be_trimmed_to_the_budget(instant) -> None:
    done = firsttoken("ask", "--base-url", fault_url(instant, "context"), "hi")
    assert done.returncode == 1
    last = done.stderr.splitlines()[-1]
    assert "the prompt exceeds the model's context length" in last
    assert "even trimmed to 6,000" not in last and "lower the budget" not in last
    assert "nothing trimming could drop" in last


def test_a_long_conversation_says_what_trimming_left(instant, tmp_path: Path) -> None:
    history = []
    for n in range(12):
        history.append({"role": "user", "content": f"question {n}: " + "why is it slow? " * 40})
        history.append({"role": "assistant", "content": "because of prefill. " * 40})
    messages = tmp_path / "chat.json"
    messages.write_text(json.dumps(history), encoding="utf-8")
    done = firsttoken(
        "ask", "--json", "--budget", "1000", "--messages", str(messages),
        "--base-url", fault_url(instant, "context"), "and now?",
    )  # fmt: skip
    payload = json.loads(done.stdout)
    left = payload["trim"]["tokens_after"]
    assert done.returncode == 1 and left <= 1000
    assert f"even trimmed to {left:,} tokens (budget 1,000," in payload["error"]["message"]
