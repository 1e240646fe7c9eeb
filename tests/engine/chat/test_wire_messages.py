"""The messages a request body carries: no null content beside a tool call."""

from __future__ import annotations

import copy

from tui.engine.chat.request import ChatRequest
from tui.engine.chat.wire_messages import wire_messages

CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


def _conversation() -> list[dict]:
    return [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "look it up"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "42"},
        {"role": "assistant", "content": "It is 42."},
        {"role": "user", "content": "thanks"},
    ]


def test_the_body_sends_an_empty_content_beside_tool_calls() -> None:
    messages = _conversation()
    body = ChatRequest(messages, "m", stream=True, temperature=0.1, max_tokens=8).body()
    sent = body["messages"]
    assert sent[2] == {"role": "assistant", "content": "", "tool_calls": [CALL]}
    assert all(message["content"] is not None for message in sent)
    # Everything else goes as it was given.
    assert [m for i, m in enumerate(sent) if i != 2] == [
        m for i, m in enumerate(messages) if i != 2
    ]


def test_the_callers_messages_are_not_changed() -> None:
    messages = _conversation()
    before = copy.deepcopy(messages)
    out = wire_messages(messages)
    assert messages == before
    assert out[2] is not messages[2]
    assert all(out[i] is messages[i] for i in (0, 1, 3, 4, 5))


def test_a_legacy_function_call_is_treated_alike() -> None:
    call = {"name": "f", "arguments": "{}"}
    message = {"role": "assistant", "content": None, "function_call": call}
    assert wire_messages([message]) == [{"role": "assistant", "content": "", "function_call": call}]


def test_a_missing_content_beside_tool_calls_is_sent_empty_too() -> None:
    message = {"role": "assistant", "tool_calls": [CALL]}
    assert wire_messages([message]) == [{"role": "assistant", "content": "", "tool_calls": [CALL]}]


def test_other_null_contents_are_left_for_the_server_to_judge() -> None:
    # Without a tool call there is nothing OpenAI documents as optional: sent as given.
    plain = {"role": "assistant", "content": None}
    empty_calls = {"role": "assistant", "content": None, "tool_calls": []}
    tool = {"role": "tool", "tool_call_id": "call_1", "content": None}
    assert wire_messages([plain, empty_calls, tool]) == [plain, empty_calls, tool]


def test_a_text_content_beside_tool_calls_is_kept() -> None:
    message = {"role": "assistant", "content": "Let me check.", "tool_calls": [CALL]}
    assert wire_messages([message]) == [message]
