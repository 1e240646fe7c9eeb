"""Fit a conversation into a token budget without breaking it.

`trim` is pure: it never mutates or copies the messages, and it raises on a bad policy rather
than quietly handing back the untrimmed prompt.

Messages are grouped into units that are kept or dropped whole:
- an assistant message with `tool_calls` plus every `tool` message answering one of its call
  ids (matched by `tool_call_id`, wherever it sits) is one "tool_result" unit, because an
  orphaned tool result or an unanswered tool call makes real APIs answer 400;
- a `tool` message answering no earlier call is a "tool_result" unit of its own (trimming does
  not repair such input);
- a "system" (or "developer") message, the "latest_user" message (the last `user` message) and
  each other message ("history") are units of their own.

Invariants, whatever the strategy:
- with keep_system every system message is kept, with keep_latest_user the latest user
  message is kept ("protected"); no message's text is ever cut;
- kept messages keep their original order;
- tokens are counted with `counter.count_messages` (reply priming included). If the protected
  messages fit the budget the result fits it; if they alone exceed it, only they are kept and
  `over_budget` is set.

Strategies:
- "priority": fill the budget in `policy.priority_order`. Within "tool_result", newest unit
  first. Within "history", the last `history_keep_tail` messages (newest first), then the first
  `history_keep_head` (oldest first), then the middle newest first; so a short budget drops the
  oldest middle history first, then the head, then the tail. A unit that does not fit is
  skipped and smaller ones after it may still fit. A category missing from priority_order
  keeps nothing beyond protected messages.
- "recent": the common simple trimmer: after the protected units, walk back from the newest
  message and stop at the first unit that does not fit.
- "none": keep everything; `over_budget` tells whether that exceeds the budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tui.engine.metrics.record import DroppedMessage
from tui.engine.tokens.counter import PromptCounter, get_counter

STRATEGIES = ("priority", "recent", "none")
CATEGORIES = ("system", "latest_user", "tool_result", "history")
SYSTEM_ROLES = frozenset({"system", "developer"})

REASON_PROTECTED_OVER = "over budget: system and latest user alone exceed it"
REASON_MIDDLE = "history: middle of conversation"
REASON_HEAD = "history: head, over budget"
REASON_TAIL = "history: tail, over budget"
REASON_TOOL = "tool_result: older than budget allows"
REASON_SYSTEM = "system: over budget (keep_system is off)"
REASON_LATEST_USER = "latest_user: over budget (keep_latest_user is off)"
REASON_RECENT = "recent: older than budget allows"


@dataclass(frozen=True)
class TrimPolicy:
    strategy: str = "priority"
    keep_system: bool = True
    keep_latest_user: bool = True
    priority_order: tuple[str, ...] = CATEGORIES
    history_keep_head: int = 2
    history_keep_tail: int = 4


@dataclass(frozen=True)
class TrimResult:
    messages: list[dict[str, Any]]  # the kept messages (the caller's own dicts), in order
    kept_indices: tuple[int, ...]
    dropped: tuple[DroppedMessage, ...]  # sorted by index
    tokens_before: int
    tokens_after: int
    budget: int
    over_budget: bool


def _check(policy: TrimPolicy) -> None:
    if policy.strategy not in STRATEGIES:
        raise ValueError(f"trim strategy {policy.strategy!r}: expected one of {STRATEGIES}")
    unknown = [c for c in policy.priority_order if c not in CATEGORIES]
    if unknown:
        raise ValueError(f"priority_order entries {unknown}: expected some of {CATEGORIES}")
    if policy.history_keep_head < 0 or policy.history_keep_tail < 0:
        raise ValueError("history_keep_head and history_keep_tail must be >= 0")


class _Units:
    """Messages grouped into all-or-nothing units; parallel lists indexed by unit number.

    Plain lists rather than one object per unit: this runs over the whole history on every
    send, and per-unit objects were most of the cost at 2,000 messages.
    """

    __slots__ = ("category", "cost", "of_message")

    def __init__(self, messages: Sequence[Mapping[str, Any]], counts: Sequence[int]) -> None:
        category: list[str] = []
        cost: list[int] = []
        of_message = [0] * len(messages)
        latest_user = -1
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].get("role") == "user":
                latest_user = i
                break
        owner: dict[object, int] = {}  # tool_call_id -> the unit of the call it answers
        new = 0  # number of the next new unit
        for i, message in enumerate(messages):
            role = message.get("role")
            if role == "tool":
                unit = owner.get(message.get("tool_call_id"), -1)
                if unit >= 0:
                    of_message[i] = unit
                    cost[unit] += counts[i]
                    continue
                kind = "tool_result"  # answers no earlier call: a unit of its own
            elif role in SYSTEM_ROLES:
                kind = "system"
            elif i == latest_user:
                kind = "latest_user"
            elif role == "assistant" and message.get("tool_calls"):
                kind = "tool_result"
                for call in message["tool_calls"]:
                    if isinstance(call, Mapping) and call.get("id") is not None:
                        owner[call["id"]] = new
            else:
                kind = "history"
            of_message[i] = new
            category.append(kind)
            cost.append(counts[i])
            new += 1
        self.category = category
        self.cost = cost
        self.of_message = of_message


def _take(
    order: Iterable[int], reason: str, cost: list[int], fate: list[str | None], room: int
) -> int:
    """Keep each unit of `order` that still fits (None), else mark it with `reason`."""
    for u in order:
        c = cost[u]
        if c <= room:
            room -= c
            fate[u] = None
        else:
            fate[u] = reason
    return room


_NOT_IN_ORDER = {c: f"{c}: not in priority order" for c in CATEGORIES}


def _fill_priority(units: _Units, fate: list[str | None], policy: TrimPolicy, room: int) -> None:
    """Decide every undecided unit (fate ""): None = kept, else the drop reason."""
    by_category: dict[str, list[int]] = {c: [] for c in CATEGORIES}
    for u, category in enumerate(units.category):
        if fate[u] is not None:
            by_category[category].append(u)
            fate[u] = _NOT_IN_ORDER[category]
    cost = units.cost
    for category in dict.fromkeys(policy.priority_order):
        found = by_category[category]
        if category == "history":
            tail_start = max(len(found) - policy.history_keep_tail, 0)
            head_end = min(policy.history_keep_head, tail_start)
            room = _take(reversed(found[tail_start:]), REASON_TAIL, cost, fate, room)
            room = _take(found[:head_end], REASON_HEAD, cost, fate, room)
            room = _take(reversed(found[head_end:tail_start]), REASON_MIDDLE, cost, fate, room)
        elif category == "tool_result":
            room = _take(reversed(found), REASON_TOOL, cost, fate, room)
        elif category == "system":
            room = _take(found, REASON_SYSTEM, cost, fate, room)
        else:
            room = _take(found, REASON_LATEST_USER, cost, fate, room)


def _fill_recent(units: _Units, fate: list[str | None], room: int) -> None:
    """Newest unit first (by its newest message); stop at the first that does not fit."""
    cost = units.cost
    full = False
    for u in reversed(units.of_message):  # a unit is met first at its newest message
        if fate[u] != "":  # protected, or already decided at a newer message
            continue
        if not full and cost[u] <= room:
            room -= cost[u]
            fate[u] = None
        else:
            full = True  # "recent" stops at the first message that does not fit
            fate[u] = REASON_RECENT


# DroppedMessage is a frozen dataclass (slow to build); between two sends most drops repeat,
# so equal ones are shared. Immutable, hence safe to share.
_DROPPED_CACHE_LIMIT = 100_000
_dropped_cache: dict[tuple[int, str], DroppedMessage] = {}


def _dropped(index: int, reason: str) -> DroppedMessage:
    if len(_dropped_cache) >= _DROPPED_CACHE_LIMIT:
        _dropped_cache.clear()
    found = _dropped_cache[index, reason] = DroppedMessage(index, reason)
    return found


def trim(
    messages: Sequence[dict[str, Any]],
    budget: int,
    policy: TrimPolicy,
    counter: PromptCounter | None = None,
) -> TrimResult:
    """Keep what matters of `messages` within `budget` tokens (see the module docstring)."""
    _check(policy)
    counter = counter or get_counter()
    counts = counter.count_each(messages)
    priming = counter.reply_priming  # what the prompt costs beyond its messages
    tokens_before = sum(counts) + priming
    n = len(messages)

    if policy.strategy == "none" or tokens_before <= budget:
        return TrimResult(
            messages=list(messages),
            kept_indices=tuple(range(n)),
            dropped=(),
            tokens_before=tokens_before,
            tokens_after=tokens_before,
            budget=budget,
            over_budget=tokens_before > budget,
        )

    units = _Units(messages, counts)
    # fate per unit: None = kept; "" = undecided; else the drop reason.
    fate: list[str | None] = [
        None
        if (category == "system" and policy.keep_system)
        or (category == "latest_user" and policy.keep_latest_user)
        else ""
        for category in units.category
    ]
    room = budget - priming - sum(c for c, f in zip(units.cost, fate, strict=True) if f is None)
    if room < 0:
        fate = [None if f is None else REASON_PROTECTED_OVER for f in fate]
    elif policy.strategy == "recent":
        _fill_recent(units, fate, room)
    else:
        _fill_priority(units, fate, policy, room)

    reasons = [fate[u] for u in units.of_message]
    kept = [i for i, reason in enumerate(reasons) if reason is None]
    cached = _dropped_cache.get
    dropped = [
        cached((i, reason)) or _dropped(i, reason)
        for i, reason in enumerate(reasons)
        if reason is not None
    ]
    tokens_after = priming + sum(map(counts.__getitem__, kept))
    return TrimResult(
        messages=[messages[i] for i in kept],
        kept_indices=tuple(kept),
        dropped=tuple(dropped),
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        budget=budget,
        over_budget=tokens_after > budget,
    )
