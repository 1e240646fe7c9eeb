"""Trimming: each invariant and each strategy on small hand-made conversations."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tui.engine.tokens import trim as trim_module
from tui.engine.tokens.counter import TokenCounter
from tui.engine.tokens.trim import TrimPolicy, TrimResult, trim

Message = dict[str, Any]
COUNTER = TokenCounter("gpt-4")


def msg(role: str, text: str = "", **extra: Any) -> Message:
    return {"role": role, "content": text, **extra}


def words(n: int, tag: str = "") -> str:
    return " ".join(f"{tag}w{i}" for i in range(n))


def tool_exchange(call_ids: list[str], result_words: int = 20) -> list[Message]:
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "search", "arguments": "{}"}}
            for cid in call_ids
        ],
    }
    results = [
        {"role": "tool", "tool_call_id": cid, "content": words(result_words, cid)}
        for cid in call_ids
    ]
    return [call, *results]


def cost(messages: list[Message], indices: list[int] | range) -> int:
    return sum(COUNTER.count_message(messages[i]) for i in indices)


def base_cost(messages: list[Message], protected: list[int]) -> int:
    return cost(messages, protected) + 3


def chat(history: int = 20) -> list[Message]:
    """system, `history` alternating messages of equal size, then the latest user message."""
    messages = [msg("system", "You are terse.")]
    for i in range(history):
        messages.append(msg("user" if i % 2 == 0 else "assistant", words(30, f"h{i}")))
    messages.append(msg("user", "the latest question"))
    return messages


def dropped_reasons(result: TrimResult) -> dict[int, str]:
    return {d.index: d.reason for d in result.dropped}


# -- basics ----------------------------------------------------------------------------------


def test_policy_defaults_match_the_contract() -> None:
    policy = TrimPolicy()
    assert policy.strategy == "priority"
    assert policy.keep_system and policy.keep_latest_user
    assert policy.priority_order == ("system", "latest_user", "tool_result", "history")
    assert (policy.history_keep_head, policy.history_keep_tail) == (2, 4)


def test_everything_kept_when_it_fits() -> None:
    messages = chat(6)
    total = COUNTER.count_messages(messages)
    result = trim(messages, total, TrimPolicy(), COUNTER)
    assert result.kept_indices == tuple(range(len(messages)))
    assert result.messages == messages
    assert result.dropped == ()
    assert result.tokens_before == result.tokens_after == total
    assert not result.over_budget


def test_none_keeps_everything_and_reports_over_budget() -> None:
    messages = chat(6)
    result = trim(messages, 10, TrimPolicy(strategy="none"), COUNTER)
    assert result.messages == messages
    assert result.over_budget
    assert result.tokens_after == result.tokens_before > 10


def test_input_is_not_mutated_and_kept_messages_are_the_callers() -> None:
    messages = chat(10) + tool_exchange(["a"])
    snapshot = copy.deepcopy(messages)
    result = trim(messages, 200, TrimPolicy(), COUNTER)
    assert messages == snapshot
    pairs = zip(result.messages, result.kept_indices, strict=True)
    assert all(kept is messages[i] for kept, i in pairs)


def test_counter_defaults_to_the_shared_one() -> None:
    messages = chat(10)
    result = trim(messages, 100, TrimPolicy())
    assert result.tokens_before > 100
    assert result.kept_indices[0] == 0


@pytest.mark.parametrize(
    "policy",
    [
        TrimPolicy(strategy="newest"),
        TrimPolicy(priority_order=("system", "memories")),
        TrimPolicy(history_keep_head=-1),
    ],
)
def test_bad_policy_raises_instead_of_returning_the_input(policy: TrimPolicy) -> None:
    with pytest.raises(ValueError):
        trim(chat(4), 10, policy, COUNTER)


# -- invariants --------------------------------------------------------------------------------


def test_system_and_latest_user_are_never_dropped() -> None:
    messages = [msg("system", "rules"), *chat(10)[1:-1], msg("system", "more rules")]
    messages.append(msg("user", "latest"))
    protected = [0, len(messages) - 2, len(messages) - 1]
    budget = base_cost(messages, protected)
    for strategy in ("priority", "recent"):
        result = trim(messages, budget, TrimPolicy(strategy=strategy), COUNTER)
        assert list(result.kept_indices) == protected
        assert not result.over_budget
        assert result.tokens_after == budget


def test_order_is_preserved() -> None:
    messages = chat(20)
    result = trim(messages, 300, TrimPolicy(), COUNTER)
    assert list(result.kept_indices) == sorted(result.kept_indices)
    assert result.messages == [messages[i] for i in result.kept_indices]


def test_protected_alone_over_budget_keeps_only_them_uncut() -> None:
    messages = [msg("system", "rules"), *chat(6)[1:-1], msg("user", words(500))]
    result = trim(messages, 50, TrimPolicy(), COUNTER)
    assert result.kept_indices == (0, len(messages) - 1)
    assert result.messages[-1] is messages[-1]
    assert result.messages[-1]["content"] == words(500)  # never cut
    assert result.over_budget
    assert result.tokens_after == COUNTER.count_messages(result.messages) > 50
    assert set(dropped_reasons(result).values()) == {trim_module.REASON_PROTECTED_OVER}


def test_fits_the_budget_whenever_protected_fit() -> None:
    messages = chat(30) + tool_exchange(["x", "y"]) + [msg("user", "last")]
    floor = base_cost(messages, [0, len(messages) - 1])
    for budget in range(floor, COUNTER.count_messages(messages) + 1, 37):
        for strategy in ("priority", "recent"):
            result = trim(messages, budget, TrimPolicy(strategy=strategy), COUNTER)
            assert result.tokens_after <= budget
            assert result.tokens_after == COUNTER.count_messages(result.messages)
            assert not result.over_budget


def test_tool_call_and_all_its_results_go_together() -> None:
    messages = [msg("system", "s"), msg("user", "look it up")]
    messages += tool_exchange(["c1", "c2"], result_words=40)  # indices 2, 3, 4
    messages += [msg("assistant", "found it"), msg("user", "thanks, and now?")]
    unit = {2, 3, 4}
    protected = [0, len(messages) - 1]
    just_enough = base_cost(messages, [*protected, *unit])
    kept = trim(messages, just_enough, TrimPolicy(), COUNTER).kept_indices
    assert unit <= set(kept)
    kept = trim(messages, just_enough - 1, TrimPolicy(), COUNTER).kept_indices
    assert not unit & set(kept)
    for budget in range(just_enough - 60, just_enough + 60):
        for strategy in ("priority", "recent"):
            kept = trim(messages, budget, TrimPolicy(strategy=strategy), COUNTER).kept_indices
            assert unit <= set(kept) or not unit & set(kept)


def test_tool_results_matched_by_id_even_when_not_adjacent() -> None:
    messages = [msg("system", "s"), msg("user", "q")]
    messages += tool_exchange(["a"])[:1]  # 2: the call
    messages.append(msg("assistant", "thinking out loud " * 20))  # 3
    messages.append(tool_exchange(["a"])[1])  # 4: its result, further on
    messages.append(msg("user", "latest"))
    budget = base_cost(messages, [0, 2, 4, 5])
    result = trim(messages, budget, TrimPolicy(), COUNTER)
    assert result.kept_indices == (0, 2, 4, 5)


def test_orphan_tool_result_is_a_unit_of_its_own() -> None:
    messages = [msg("system", "s"), msg("tool", "stray", tool_call_id="nobody"), msg("user", "q")]
    result = trim(messages, base_cost(messages, [0, 2]), TrimPolicy(), COUNTER)
    assert result.kept_indices == (0, 2)
    assert dropped_reasons(result) == {1: trim_module.REASON_TOOL}


# -- priority ----------------------------------------------------------------------------------


def test_priority_keeps_head_and_tail_and_drops_the_middle() -> None:
    messages = chat(20)  # 0 system, 1..20 history, 21 latest user
    head, tail = [1, 2], [17, 18, 19, 20]
    budget = base_cost(messages, [0, 21, *head, *tail])
    result = trim(messages, budget, TrimPolicy(), COUNTER)
    assert list(result.kept_indices) == [0, *head, *tail, 21]
    reasons = dropped_reasons(result)
    assert set(reasons) == set(range(3, 17))
    assert set(reasons.values()) == {trim_module.REASON_MIDDLE}


def test_priority_fills_the_middle_newest_first() -> None:
    messages = chat(20)
    budget = base_cost(messages, [0, 21, 1, 2, 17, 18, 19, 20, 15, 16])
    result = trim(messages, budget, TrimPolicy(), COUNTER)
    assert list(result.kept_indices) == [0, 1, 2, 15, 16, 17, 18, 19, 20, 21]


def test_priority_short_budget_drops_head_before_tail() -> None:
    messages = chat(20)
    budget = base_cost(messages, [0, 21, 17, 18, 19, 20])
    result = trim(messages, budget, TrimPolicy(), COUNTER)
    assert list(result.kept_indices) == [0, 17, 18, 19, 20, 21]
    reasons = dropped_reasons(result)
    assert reasons[1] == reasons[2] == trim_module.REASON_HEAD
    assert reasons[10] == trim_module.REASON_MIDDLE
    shorter = trim(messages, budget - 1, TrimPolicy(), COUNTER)
    assert dropped_reasons(shorter)[17] == trim_module.REASON_TAIL


def test_priority_head_and_tail_sizes_come_from_the_policy() -> None:
    messages = chat(20)
    policy = TrimPolicy(history_keep_head=1, history_keep_tail=2)
    budget = base_cost(messages, [0, 21, 1, 19, 20])
    assert list(trim(messages, budget, policy, COUNTER).kept_indices) == [0, 1, 19, 20, 21]


def test_priority_tool_results_newest_first_and_before_history() -> None:
    messages = [msg("system", "s"), msg("user", "first")]
    messages += tool_exchange(["old"])  # 2, 3
    messages += [msg("assistant", words(30, "a")), msg("user", words(30, "b"))]  # 4, 5
    messages += tool_exchange(["new"])  # 6, 7
    messages += [msg("assistant", "done"), msg("user", "latest")]  # 8, 9
    budget = base_cost(messages, [0, 9, 6, 7])
    result = trim(messages, budget, TrimPolicy(), COUNTER)
    assert result.kept_indices == (0, 6, 7, 9)
    reasons = dropped_reasons(result)
    assert reasons[2] == reasons[3] == trim_module.REASON_TOOL
    history_first = TrimPolicy(priority_order=("system", "latest_user", "history", "tool_result"))
    budget = base_cost(messages, [0, 9, 5, 8])
    kept = trim(messages, budget, history_first, COUNTER).kept_indices
    assert kept == (0, 5, 8, 9)


def test_priority_category_left_out_of_the_order_is_dropped() -> None:
    messages = [msg("system", "s"), msg("user", "first"), *tool_exchange(["t"]), msg("user", "q")]
    policy = TrimPolicy(priority_order=("system", "latest_user", "history"))
    result = trim(messages, COUNTER.count_messages(messages) - 1, policy, COUNTER)
    assert result.kept_indices == (0, 1, 4)
    assert dropped_reasons(result) == {
        2: "tool_result: not in priority order",
        3: "tool_result: not in priority order",
    }


def test_unprotected_system_and_latest_user_follow_the_order() -> None:
    messages = chat(6)
    policy = TrimPolicy(keep_system=False, keep_latest_user=False)
    result = trim(messages, 3 + COUNTER.count_message(messages[-1]), policy, COUNTER)
    assert result.kept_indices == (len(messages) - 1,)
    assert dropped_reasons(result)[0] == trim_module.REASON_SYSTEM
    result = trim(messages, 3, policy, COUNTER)
    assert result.kept_indices == ()
    assert not result.over_budget
    assert dropped_reasons(result)[len(messages) - 1] == trim_module.REASON_LATEST_USER


# -- recent ------------------------------------------------------------------------------------


def test_recent_fills_newest_first_and_stops_at_the_first_miss() -> None:
    messages = chat(20)
    big = msg("assistant", words(400))
    messages.insert(18, big)  # 18 is big; 19..21 history; 22 latest user
    budget = base_cost(messages, [0, 22, 19, 20, 21]) + 50
    result = trim(messages, budget, TrimPolicy(strategy="recent"), COUNTER)
    # 18 does not fit; older small ones would, but "recent" stops there.
    assert list(result.kept_indices) == [0, 19, 20, 21, 22]
    assert set(dropped_reasons(result).values()) == {trim_module.REASON_RECENT}


def test_recent_never_splits_a_tool_exchange() -> None:
    messages = [msg("system", "s"), msg("user", "q"), *tool_exchange(["a", "b"]), msg("user", "l")]
    budget = base_cost(messages, [0, 5, 2, 3])  # room for the call and one result only
    result = trim(messages, budget, TrimPolicy(strategy="recent"), COUNTER)
    assert result.kept_indices == (0, 5)


# -- cost --------------------------------------------------------------------------------------


def test_trimming_after_one_new_message_counts_only_it() -> None:
    counter = TokenCounter("gpt-4")
    messages = chat(400)
    trim(messages, 500, TrimPolicy(), counter)
    misses = counter.memo_misses
    trim([*messages, msg("user", "one more")], 500, TrimPolicy(), counter)
    assert counter.memo_misses == misses + 1
