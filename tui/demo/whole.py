"""The demo endpoint's non-streamed reply: one JSON body, sent when its last token is due."""

from __future__ import annotations

import json
from typing import Any

from tui.demo.dialects import Dialect
from tui.demo.exchange import Exchange
from tui.demo.faults import EARLY_TOKENS, Fault
from tui.demo.plan import ReplyPlan
from tui.demo.schedule import Schedule, sleep_until
from tui.demo.usage import report


async def write_whole(
    ex: Exchange, plan: ReplyPlan, schedule: Schedule, fault: Fault | None, dialect: Dialect
) -> bool:
    """The non-streaming reply; False when the connection must close afterwards."""
    entry = ex.entry
    kind = fault.kind if fault else None
    if kind == "early":  # the connection dies before the body is sent
        await sleep_until(schedule.due(EARLY_TOKENS - 1))
        return False
    schedule.shift = fault.held_s() if fault else 0.0
    count = len(plan.tokens)
    first_due = schedule.due(0)
    last_due = schedule.due(count - 1) if count or plan.hidden_reasoning else first_due
    await sleep_until(last_due)
    if kind == "empty":
        await ex.send_full(200, b"", "application/json")
        return ex.keep_alive
    if kind == "badjson":
        await ex.send_full(200, b"{not json", "application/json")
        return ex.keep_alive
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(plan.content),
        "refusal": None,
    }
    if plan.reasoning_field is not None:
        message[plan.reasoning_field] = "".join(plan.reasoning)
    completion: dict[str, Any] = {
        "id": entry["id"],
        "object": "chat.completion",
        "created": int(entry["received_at_epoch"]),
        "model": entry["model"],
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": plan.finish_reason,
            }
        ],
    }
    decode_ms = schedule.decode_ms(first_due, last_due if count else first_due)
    counted, figures = report(entry, plan, dialect, count, decode_ms)
    if kind != "nousage":
        completion["usage"] = counted
    if dialect.timings:
        completion["timings"] = figures
    body = json.dumps(completion, ensure_ascii=False).encode()
    await ex.send_full(200, body, "application/json")
    # Without streaming every token arrives with the whole body; the log also keeps when the
    # schedule had them due.
    if count:
        entry["first_token_at"] = entry["last_token_at"] = entry["first_byte_at"]
        entry["scheduled_first_token_at"], entry["scheduled_last_token_at"] = first_due, last_due
    if plan.content:
        entry["first_answer_token_at"] = entry["first_byte_at"]
    entry["output_tokens"] = count
    return ex.keep_alive
