"""What one POST /v1/chat/completions gets: a check of the body, then an error or the reply.

The server logs the request first (demo_server.py); this decides the answer — a fault, or
a reply of the asked-for length on the latency model's schedule (written by demo_stream.py).
"""

from __future__ import annotations

import asyncio

from tui.demo.exchange import Exchange
from tui.demo.faults import (
    Fault,
    FaultCounter,
    context_error_message,
    error_parts,
    wait_for_close,
)
from tui.demo.latency_model import LatencyModel
from tui.demo.reply import ReplySummary, reply_tokens, requested_length
from tui.demo.stream import Schedule, sleep_until, write_stream, write_whole


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
    fault: Fault | None,
    faults: FaultCounter,
    reader: asyncio.StreamReader,
    max_tokens: int | None,
) -> bool:
    """Answer the logged request in `ex.entry`; False when the connection must close."""
    entry = ex.entry
    received_at = entry["received_at"]
    kind = fault.kind if fault else None
    if kind == "drop":
        return False
    if kind == "hang":
        await wait_for_close(reader)
        return False
    answer_at = received_at + (model.rtt_ms + model.queue_ms) / 1000
    if (status := faults.status(fault)) is not None:
        await sleep_until(received_at + model.rtt_ms / 1000)
        message, type_, code, extra = error_parts(status)
        await ex.send_error(status, message, type_, code, extra=extra)
        return ex.keep_alive
    if kind == "context":
        await sleep_until(received_at + model.rtt_ms / 1000)
        message = context_error_message(entry["prompt_tokens"])
        await ex.send_error(
            400, message, "invalid_request_error", "context_length_exceeded", param="messages"
        )
        return ex.keep_alive

    wanted = requested_length(entry["messages"])
    target = model.reply_tokens if wanted is None else wanted
    capped = max_tokens is not None and max_tokens < target
    count = target if max_tokens is None else min(max_tokens, target)
    entry["finish_reason"] = "length" if capped else "stop"
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
    tokens = reply_tokens(summary, count)
    schedule = Schedule(received_at + entry["simulated_ttft_ms"] / 1000, model)
    stall_s = fault.stall_ms / 1000 if fault else 0.0
    if entry["stream"]:
        return await write_stream(ex, kind, tokens, schedule, answer_at, stall_s)
    schedule.shift = stall_s
    return await write_whole(ex, kind, tokens, schedule)
