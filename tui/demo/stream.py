"""The demo endpoint's reply on the wire: SSE events or one JSON body, on the latency schedule.

The first content token is due at receipt + TTFT, token i at first + i / rate: absolute
deadlines, so sleep overshoot never accumulates, and every token already due goes out in one
write (as separate SSE events) — that keeps 2,000 tokens/s accurate despite ~1 ms sleeps.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from tui.demo import http
from tui.demo.exchange import Exchange
from tui.demo.faults import BADJSON_TOKENS, EARLY_TOKENS, STALL_AFTER_TOKENS
from tui.demo.latency_model import LatencyModel

MAX_TOKENS_PER_WRITE = 4096  # bounds one batch's memory when a client reads slowly


async def sleep_until(deadline: float) -> None:
    """Sleep until perf_counter() >= deadline (re-checked: never wakes early)."""
    while (remaining := deadline - time.perf_counter()) > 0:
        await asyncio.sleep(remaining)


class Schedule:
    """Absolute deadlines: token i is due at first_due + i / rate (+ any pause so far)."""

    def __init__(self, first_due: float, model: LatencyModel) -> None:
        self.first_due = first_due
        self.model = model
        self.shift = 0.0

    def due(self, index: int) -> float:
        return self.first_due + self.model.token_offset_s(index) + self.shift

    def pause(self, index: int, until: float) -> None:
        """Token `index` (and every later one, at the same rate) waits until `until`."""
        self.shift = max(self.shift, until - (self.first_due + self.model.token_offset_s(index)))


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


async def write_stream(
    ex: Exchange,
    kind: str | None,
    tokens: list[str],
    schedule: Schedule,
    answer_at: float,
    stall_s: float,
) -> bool:
    """The SSE reply; False when the connection must close afterwards."""
    entry = ex.entry
    include_usage = entry["include_usage"] and kind != "nousage"
    base = {
        "id": entry["id"],
        "object": "chat.completion.chunk",
        "created": int(entry["received_at_epoch"]),
        "model": entry["model"],
    }
    usage_null = ',"usage":null' if include_usage else ""

    def event(choices: list[dict], **extra: Any) -> bytes:
        payload = {**base, "choices": choices, **extra}
        if include_usage and "usage" not in extra:
            payload["usage"] = None
        return ex.frame(b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n")

    # The content events are the hot path: a prebuilt prefix and suffix around the token.
    prefix = (
        b"data: " + json.dumps(base)[:-1].encode() + b',"choices":[{"index":0,"delta":{"content":'
    )
    suffix = b'},"logprobs":null,"finish_reason":null}]' + usage_null.encode() + b"}\n\n"

    def content(token: str) -> bytes:
        return ex.frame(prefix + json.dumps(token, ensure_ascii=False).encode() + suffix)

    await sleep_until(answer_at)
    await ex.start_stream()
    if kind == "empty":  # llama.cpp on context overflow: 200, SSE headers, then nothing
        return False
    role = {
        "index": 0,
        "delta": {"role": "assistant", "content": ""},
        "logprobs": None,
        "finish_reason": None,
    }
    await ex.send(event([role]))

    limit = {"early": EARLY_TOKENS, "badjson": BADJSON_TOKENS}.get(kind or "", len(tokens))
    limit = min(limit, len(tokens))
    # stall-<ms>: a batch never crosses the pause, which starts when token 5 was written.
    pause_at = STALL_AFTER_TOKENS if stall_s > 0 else limit
    sent = 0
    while sent < limit:
        await sleep_until(schedule.due(sent))
        now = time.perf_counter()
        stop = min(limit, pause_at) if sent < pause_at else limit
        end = sent + 1
        while end < stop and end - sent < MAX_TOKENS_PER_WRITE and schedule.due(end) <= now:
            end += 1
        written_at = await ex.send(b"".join(content(t) for t in tokens[sent:end]))
        if entry["first_token_at"] is None:
            entry["first_token_at"] = written_at
        entry["last_token_at"] = written_at
        entry["output_tokens"] = end
        if end == pause_at and stall_s > 0:
            schedule.pause(end, written_at + stall_s)
        sent = end

    if kind == "early":  # the connection closes mid-stream: no finish, no [DONE]
        return False
    if kind == "badjson":
        await ex.send(ex.frame(b"data: {not json\n\n"))
    else:
        finish = {
            "index": 0,
            "delta": {},
            "logprobs": None,
            "finish_reason": entry["finish_reason"],
        }
        tail = event([finish])
        if include_usage:
            tail += event([], usage=usage(entry["prompt_tokens"], sent))
        await ex.send(tail)
    await ex.send(ex.frame(b"data: [DONE]\n\n") + (http.LAST_CHUNK if ex.chunked else b""))
    return ex.keep_alive


async def write_whole(
    ex: Exchange, kind: str | None, tokens: list[str], schedule: Schedule
) -> bool:
    """The non-streaming reply, sent when its last token is due; False: close the connection."""
    entry = ex.entry
    if kind == "early":  # the connection dies before the body is sent
        await sleep_until(schedule.due(EARLY_TOKENS - 1))
        return False
    await sleep_until(schedule.due(max(len(tokens) - 1, 0)))
    if kind == "empty":
        await ex.send_full(200, b"", "application/json")
        return ex.keep_alive
    if kind == "badjson":
        await ex.send_full(200, b"{not json", "application/json")
        return ex.keep_alive
    message = {"role": "assistant", "content": "".join(tokens), "refusal": None}
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
                "finish_reason": entry["finish_reason"],
            }
        ],
    }
    if kind != "nousage":
        completion["usage"] = usage(entry["prompt_tokens"], len(tokens))
    body = json.dumps(completion, ensure_ascii=False).encode()
    await ex.send_full(200, body, "application/json")
    # Without streaming the first token arrives with the whole body.
    entry["first_token_at"] = entry["last_token_at"] = entry["first_byte_at"]
    entry["output_tokens"] = len(tokens)
    return ex.keep_alive
