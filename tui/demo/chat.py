"""What one POST /v1/chat/completions gets: a check of the body, then an error or the reply.

The server logs the request first (server.py); this decides the answer: a fault, a refusal of
a parameter the model does not take, or a reply (plan.py) on the latency model's schedule,
written by stream.py or whole.py.
"""

from __future__ import annotations

import asyncio

from tui.demo.dialects import Dialect
from tui.demo.exchange import Exchange
from tui.demo.faults import (
    Fault,
    FaultCounter,
    context_error_message,
    error_parts,
    wait_for_close,
)
from tui.demo.latency_model import LatencyModel
from tui.demo.model_kinds import ModelKind, refused_parameter
from tui.demo.plan import plan_reply
from tui.demo.reply import ReplySummary
from tui.demo.schedule import Schedule, sleep_until
from tui.demo.stream import write_stream
from tui.demo.whole import write_whole


def invalid_chat_body(body: dict) -> tuple[str, str] | None:
    """(message, param) when the body is not a chat request we can answer."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array of message objects.", "messages"
    if not all(isinstance(m, dict) for m in messages):
        return "each entry of 'messages' must be an object with a role.", "messages"
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            return f"'{key}' must be an integer of at least 1, got {value!r}.", key
    return None


async def answer_chat(
    ex: Exchange,
    model: LatencyModel,
    dialect: Dialect,
    kind: ModelKind,
    body: dict,
    fault: Fault | None,
    faults: FaultCounter,
    reader: asyncio.StreamReader,
) -> bool:
    """Answer the logged request in `ex.entry`; False when the connection must close."""
    entry = ex.entry
    received_at = entry["received_at"]
    shape = fault.kind if fault else None
    if shape == "drop":
        return False
    if shape == "hang":
        await wait_for_close(reader)
        return False
    if (status := faults.status(fault)) is not None:
        await sleep_until(received_at + model.rtt_ms / 1000)
        message, type_, code, extra = error_parts(status)
        await ex.send_error(status, message, type_, code, extra=extra)
        return ex.keep_alive
    if (refusal := refused_parameter(kind, body)) is not None:
        await sleep_until(received_at + model.rtt_ms / 1000)
        await ex.send_full(400, refusal, "application/json")
        return ex.keep_alive
    if shape == "context":
        await sleep_until(received_at + model.rtt_ms / 1000)
        message = context_error_message(entry["prompt_tokens"])
        await ex.send_error(
            400, message, "invalid_request_error", "context_length_exceeded", param="messages"
        )
        return ex.keep_alive

    summary = ReplySummary(
        messages=entry["messages"],
        prompt_tokens=entry["prompt_tokens"],
        prefill_ms=entry["prefill_ms"],
        model=entry["model"],
        preset=model.preset,
        stream=entry["stream"],
        fixed_ms=model.rtt_ms + model.queue_ms,
        prefill_ms_per_token=model.prefill_ms_per_token,
        decode_tokens_per_s=model.decode_tokens_per_s,
    )
    plan = plan_reply(summary, kind, model.reply_tokens, entry["max_tokens"])
    entry["finish_reason"] = plan.finish_reason
    entry["reasoning_tokens"] = plan.reasoning_total
    first_due = received_at + entry["simulated_ttft_ms"] / 1000
    schedule = Schedule(first_due, model, hidden=plan.hidden_reasoning)
    if entry["stream"]:
        answer_at = received_at + (model.rtt_ms + model.queue_ms) / 1000
        return await write_stream(ex, plan, schedule, answer_at, fault, dialect)
    return await write_whole(ex, plan, schedule, fault, dialect)
