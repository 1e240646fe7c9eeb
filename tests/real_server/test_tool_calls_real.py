"""A conversation with tool calls, as OpenAI returns and saves them (`"content": null` beside
`tool_calls`), sent to llama-cpp-python's server: firsttoken sends it in the form both accept."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import firsttoken
from real_server_support import MODEL, RealServer, config_files

CALL_ID = "call_weather_1"
OMITTED = object()
CONVERSATION = [
    {"role": "system", "content": "You are a helpful assistant. Answer in one sentence."},
    {"role": "user", "content": "What is the weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": CALL_ID,
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": CALL_ID, "content": '{"sky": "sunny", "celsius": 21}'},
    {"role": "assistant", "content": "It is sunny and 21 degrees in Paris."},
]


def _post_raw(server: RealServer, messages: list[dict[str, Any]]) -> int:
    """The status of a chat request sent exactly as given (no firsttoken in between)."""
    body = {"model": MODEL, "messages": messages, "max_tokens": 1}
    request = urllib.request.Request(
        server.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


@pytest.mark.parametrize(
    ("content", "status"),
    [(None, 500), (OMITTED, 500), ("", 200)],
    ids=["null", "omitted", "empty string"],
)
def test_what_the_server_accepts_beside_tool_calls(
    llama_server: RealServer, content: object, status: int
) -> None:
    # The facts firsttoken's wire form rests on (OpenAI accepts all three).
    calling = {k: v for k, v in CONVERSATION[2].items() if k != "content"}
    if content is not OMITTED:
        calling["content"] = content
    question = [*CONVERSATION[:2], calling, *CONVERSATION[3:], {"role": "user", "content": "Rome?"}]
    assert _post_raw(llama_server, question) == status


def test_ask_with_a_tool_call_conversation_gets_a_reply(
    llama_server: RealServer, tmp_path: Path
) -> None:
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(CONVERSATION))
    done = firsttoken(
        "ask", "--base-url", llama_server.base_url, *config_files(tmp_path, max_tokens=16),
        "--messages", str(conversation), "Should I take an umbrella?",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
