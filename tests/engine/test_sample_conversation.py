"""The bloated sample conversation: big enough to be trimmed, well formed, deterministic."""

from __future__ import annotations

import json

from tui.engine.tokens.counter import get_counter
from tui.sample_conversation import bloated_sample


def test_sample_is_over_eight_thousand_tokens_with_a_long_system_prompt() -> None:
    counter = get_counter("gpt-4o-mini")
    messages = bloated_sample()
    assert 8_000 < counter.count_messages(messages) < 9_500
    assert 1_200 <= counter.count_message(messages[0]) <= 1_700
    assert messages[0]["role"] == "system"


def test_shape_ten_rounds_and_a_short_final_question() -> None:
    messages = bloated_sample()
    counter = get_counter("gpt-4o-mini")
    users = [m for m in messages if m["role"] == "user"]
    assert len(users) == 11
    assert messages[-1]["role"] == "user"
    assert counter.count_message(messages[-1]) < 40
    for message in messages[1:-1]:
        if message.get("content") and message["role"] in ("user", "assistant"):
            assert 200 <= counter.count_message(message) <= 400, message["content"][:60]


def test_tool_calls_are_paired_with_their_results() -> None:
    messages = bloated_sample()
    calls = 0
    for index, message in enumerate(messages):
        if message.get("tool_calls"):
            ids = [call["id"] for call in message["tool_calls"]]
            results = messages[index + 1 : index + 1 + len(ids)]
            assert [r["role"] for r in results] == ["tool"] * len(ids)
            assert [r["tool_call_id"] for r in results] == ids
            for call in message["tool_calls"]:
                assert call["type"] == "function"
                json.loads(call["function"]["arguments"])
            calls += len(ids)
        if message["role"] == "tool":
            previous = messages[index - 1]
            assert previous.get("tool_calls") or previous["role"] == "tool"
    assert calls >= 3
    tool_ids = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert len(tool_ids) == len(set(tool_ids)) == calls


def test_sample_is_deterministic_and_independent() -> None:
    first = bloated_sample()
    assert json.dumps(first) == json.dumps(bloated_sample())
    first[0]["content"] = "changed"
    assert bloated_sample()[0]["content"] != "changed"


def test_default_budget_trims_it() -> None:
    from tui.engine.tokens.trim import TrimPolicy, trim

    result = trim(bloated_sample(), 6_000, TrimPolicy(), get_counter("gpt-4o-mini"))
    assert result.dropped
    assert result.tokens_after <= 6_000 < result.tokens_before
