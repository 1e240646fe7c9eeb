"""Property tests: the trimming invariants hold on random conversations and policies."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.engine.tokens.counter import TokenCounter
from tui.engine.tokens.trim import CATEGORIES, REASON_PROTECTED_OVER, SYSTEM_ROLES, TrimPolicy, trim

Message = dict[str, Any]
COUNTER = TokenCounter("gpt-4")


def _huge(n: int, word: str) -> str:
    return " ".join([word] * n)


_texts = st.one_of(
    st.just(""),
    st.text(max_size=40),
    st.builds(_huge, st.integers(100, 3000), st.sampled_from(["tok", "首"])),  # huge
)
_kinds = st.sampled_from(["system", "user", "assistant", "tool"])


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """System messages anywhere, user/assistant turns, tool exchanges with 1-3 parallel calls."""
    messages: list[Message] = []
    calls = 0
    for kind in draw(st.lists(_kinds, max_size=25)):
        if kind == "tool":
            ids = [f"call_{calls}_{k}" for k in range(draw(st.integers(1, 3)))]
            calls += 1
            messages.append(
                {
                    "role": "assistant",
                    "content": draw(st.one_of(st.none(), _texts)),
                    "tool_calls": [
                        {
                            "id": i,
                            "type": "function",
                            "function": {"name": "lookup", "arguments": draw(_texts)},
                        }
                        for i in ids
                    ],
                }
            )
            for i in ids:
                messages.append({"role": "tool", "tool_call_id": i, "content": draw(_texts)})
        else:
            content = draw(_texts)
            if kind == "user" and draw(st.booleans()):
                content = [{"type": "text", "text": content}]
            messages.append({"role": kind, "content": content})
    return messages


policies = st.builds(
    TrimPolicy,
    strategy=st.sampled_from(["priority", "recent", "none"]),
    keep_system=st.booleans(),
    keep_latest_user=st.booleans(),
    priority_order=st.permutations(CATEGORIES).flatmap(
        lambda order: st.integers(0, len(order)).map(lambda n: tuple(order[n:]))
    ),
    history_keep_head=st.integers(0, 4),
    history_keep_tail=st.integers(0, 6),
)


def _protected(messages: list[Message], policy: TrimPolicy) -> set[int]:
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    protected = set()
    if policy.keep_system:
        protected |= {i for i, m in enumerate(messages) if m["role"] in SYSTEM_ROLES}
    if policy.keep_latest_user and users:
        protected.add(users[-1])
    return protected


def _tool_units(messages: list[Message]) -> list[set[int]]:
    owner: dict[str, int] = {}
    units: dict[int, set[int]] = {}
    for i, m in enumerate(messages):
        if m.get("tool_calls"):
            units[i] = {i}
            for call in m["tool_calls"]:
                owner[call["id"]] = i
        elif m["role"] == "tool":
            units[owner[m["tool_call_id"]]].add(i)
    return list(units.values())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), policies, st.data())
def test_trim_invariants(messages: list[Message], policy: TrimPolicy, data: st.DataObject) -> None:
    total = COUNTER.count_messages(messages)
    budget = data.draw(st.integers(0, total + 20), label="budget")
    result = trim(messages, budget, policy, COUNTER)
    kept = list(result.kept_indices)

    # Bookkeeping: kept and dropped partition the input; order is preserved.
    assert kept == sorted(set(kept))
    assert result.messages == [messages[i] for i in kept]
    dropped = [d.index for d in result.dropped]
    assert sorted(kept + dropped) == list(range(len(messages)))
    assert all(d.reason for d in result.dropped)
    assert result.tokens_before == total
    assert result.tokens_after == COUNTER.count_messages(result.messages)
    assert result.budget == budget

    if policy.strategy == "none":
        assert kept == list(range(len(messages)))
        assert result.over_budget == (total > budget)
        return

    # Protected messages are never dropped.
    protected = _protected(messages, policy)
    assert protected <= set(kept)

    # A tool call and all its results are kept or dropped together.
    for unit in _tool_units(messages):
        assert unit <= set(kept) or not unit & set(kept)

    # Fits whenever the protected messages fit; otherwise only they are kept, flagged.
    floor = COUNTER.count_messages([messages[i] for i in sorted(protected)])
    if floor <= budget:
        assert result.tokens_after <= budget
        assert not result.over_budget
    else:
        assert set(kept) == protected
        assert result.over_budget
        assert all(d.reason == REASON_PROTECTED_OVER for d in result.dropped)


@settings(max_examples=100, deadline=None)
@given(conversations(), st.integers(0, 5000))
def test_nothing_dropped_when_it_fits(messages: list[Message], slack: int) -> None:
    budget = COUNTER.count_messages(messages) + slack
    for strategy in ("priority", "recent", "none"):
        result = trim(messages, budget, TrimPolicy(strategy=strategy), COUNTER)
        assert result.messages == messages
        assert result.dropped == ()


@settings(max_examples=200, deadline=None)
@given(conversations(), st.data())
def test_priority_drops_nothing_that_would_still_fit(
    messages: list[Message], data: st.DataObject
) -> None:
    """Greedy fill: every unit priority dropped is bigger than the room left at the end."""
    total = COUNTER.count_messages(messages)
    budget = data.draw(st.integers(0, total), label="budget")
    result = trim(messages, budget, TrimPolicy(), COUNTER)
    if result.over_budget:
        return
    room = budget - result.tokens_after
    unit_of = {i: frozenset(unit) for unit in _tool_units(messages) for i in unit}
    for d in result.dropped:
        unit = unit_of.get(d.index, frozenset([d.index]))
        assert sum(COUNTER.count_message(messages[i]) for i in unit) > room
