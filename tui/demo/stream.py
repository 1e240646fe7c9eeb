"""The demo endpoint's streamed reply: SSE events on the latency schedule, in the dialect's shape.

Thinking goes first (`reasoning_content` deltas, or OpenRouter's `reasoning`), then the answer
as `content`, one token per event; every token already due goes out in one write (as separate
events), which keeps 2,000 tokens/s accurate despite ~1 ms sleeps. The last chunks are the
finish reason, `usage` when asked for and the dialect sends it, llama.cpp's `timings` on the
last of them, then `[DONE]`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tui.demo import http
from tui.demo.dialects import Dialect
from tui.demo.exchange import Exchange
from tui.demo.faults import BADJSON_TOKENS, EARLY_TOKENS, Fault
from tui.demo.plan import ReplyPlan
from tui.demo.schedule import Schedule, sleep_until
from tui.demo.usage import report

MAX_TOKENS_PER_WRITE = 4096  # bounds one batch's memory when a client reads slowly


class _Events:
    """The SSE events of one reply; the token events are prebuilt around the token's JSON."""

    def __init__(self, ex: Exchange, plan: ReplyPlan, usage_null: bool) -> None:
        entry = ex.entry
        self.ex = ex
        self.usage_null = usage_null
        self.base = {
            "id": entry["id"],
            "object": "chat.completion.chunk",
            "created": int(entry["received_at_epoch"]),
            "model": entry["model"],
        }
        head = b"data: " + json.dumps(self.base)[:-1].encode() + b',"choices":[{"index":0,"delta":{'
        self.close = (
            b'},"logprobs":null,"finish_reason":null}]'
            + (b',"usage":null' if usage_null else b"")
            + b"}\n\n"
        )
        self.content_open = head + b'"content":'
        if plan.reasoning_field == "reasoning":  # OpenRouter's delta: role and "" content too
            self.thought_open = head + b'"role":"assistant","content":"","reasoning":'
            self.thought_close = b',"reasoning_details":[]' + self.close
        else:  # llama.cpp, vLLM and DeepSeek: the delta holds only the new thinking
            field = plan.reasoning_field or "reasoning_content"
            self.thought_open = head + f'"{field}":'.encode()
            self.thought_close = self.close
        self.tokens = plan.tokens
        self.thoughts = len(plan.reasoning)

    def token(self, index: int) -> bytes:
        """The hot path: one event per token."""
        text = json.dumps(self.tokens[index], ensure_ascii=False).encode()
        if index < self.thoughts:
            return self.ex.frame(self.thought_open + text + self.thought_close)
        return self.ex.frame(self.content_open + text + self.close)

    def payload(self, choices: list[dict], **extra: Any) -> dict[str, Any]:
        payload = {**self.base, "choices": choices, **extra}
        if self.usage_null and "usage" not in payload:
            payload["usage"] = None
        return payload

    def encode(self, payload: dict[str, Any]) -> bytes:
        return self.ex.frame(b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n")

    def role(self) -> bytes:
        delta = {"role": "assistant", "content": ""}
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
        return self.encode(self.payload([choice]))

    def progress(self, total: int, cached: int, processed: int, time_ms: float) -> bytes:
        """llama.cpp's prompt progress chunk: a role-only delta with `content: null`."""
        delta = {"role": "assistant", "content": None}
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
        figures = {"total": total, "cache": cached, "processed": processed, "time_ms": time_ms}
        return self.encode(self.payload([choice], prompt_progress=figures))


# llama.cpp reports its progress once per batch of the prompt it computes (its ubatch).
PROGRESS_BATCH = 512


async def _send_progress(ex: Exchange, events: _Events, started_at: float) -> None:
    """The prompt progress llama.cpp sends while it computes the prompt: one chunk as it starts
    (the cached part done), one after each batch, the last as the prompt is done."""
    entry = ex.entry
    total, cached = entry["prompt_tokens"], entry["cached_prompt_tokens"]
    computed, prefill_ms = total - cached, entry["prefill_ms"]
    done = 0
    while True:
        time_ms = prefill_ms * done / computed if computed else 0.0
        await sleep_until(started_at + time_ms / 1000)
        await ex.send(events.progress(total, cached, cached + done, round(time_ms, 3)))
        entry["progress_chunks"] += 1
        if done >= computed:
            return
        done = min(computed, done + PROGRESS_BATCH)


async def _send_tokens(
    ex: Exchange,
    token: Callable[[int], bytes],
    limit: int,
    schedule: Schedule,
    pauses: dict[int, float],
    first_answer: int,
) -> int:
    """Send tokens [0, limit) on the schedule, stamping the log; returns how many were sent."""
    entry = ex.entry
    marks = sorted(pauses)
    resuming: dict | None = None  # the pause whose end the next write stamps
    sent = 0
    while sent < limit:
        await sleep_until(schedule.due(sent))
        now = time.perf_counter()
        stop = min(next((m for m in marks if m > sent), limit), limit)  # a batch ends at a pause
        end = sent + 1
        while end < stop and end - sent < MAX_TOKENS_PER_WRITE and schedule.due(end) <= now:
            end += 1
        written_at = await ex.send(b"".join([token(i) for i in range(sent, end)]))
        if entry["first_token_at"] is None:
            entry["first_token_at"] = written_at
        if sent <= first_answer < end:
            entry["first_answer_token_at"] = written_at
        entry["last_token_at"] = written_at
        entry["output_tokens"] = end
        if resuming is not None:
            resuming["resumed_at"] = written_at
            resuming = None
        if end in pauses:
            schedule.pause(end, written_at + pauses[end])
            resuming = {
                "after_tokens": end,
                "pause_ms": pauses[end] * 1000,
                "paused_at": written_at,
                "resumed_at": None,
            }
            entry["pauses"].append(resuming)
        sent = end
    return sent


async def write_stream(
    ex: Exchange,
    plan: ReplyPlan,
    schedule: Schedule,
    answer_at: float,
    fault: Fault | None,
    dialect: Dialect,
) -> bool:
    """The SSE reply; False when the connection must close afterwards."""
    entry = ex.entry
    kind = fault.kind if fault else None
    include_usage = entry["include_usage"] and dialect.stream_usage and kind != "nousage"
    events = _Events(ex, plan, usage_null=include_usage and dialect.usage_details == "openai")

    def ending(sent: int, first_due: float, last_due: float) -> bytes:
        finish = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": plan.finish_reason}
        last = [events.payload([finish])]
        decode_ms = schedule.decode_ms(first_due, last_due)
        counted, figures = report(entry, plan, dialect, sent, decode_ms)
        if include_usage:
            last.append(events.payload([], usage=counted))
        if dialect.timings:
            last[-1]["timings"] = figures
        done = ex.frame(b"data: [DONE]\n\n") + (http.LAST_CHUNK if ex.chunked else b"")
        return b"".join(events.encode(p) for p in last) + done

    await sleep_until(answer_at)
    await ex.start_stream()
    if kind == "empty":  # llama.cpp on context overflow: 200, SSE headers, then nothing
        return False
    tokens = len(plan.tokens)
    limit = min({"early": EARLY_TOKENS, "badjson": BADJSON_TOKENS}.get(kind or "", tokens), tokens)
    first_answer = len(plan.reasoning) if plan.content else -1

    first_due = schedule.due(0)
    if kind == "buffered":  # the schedule runs, the bytes wait for the last token
        body = [events.role()] + [events.token(i) for i in range(limit)]
        last_due = schedule.due(limit - 1) if limit else first_due
        await sleep_until(last_due)
        written_at = await ex.send(b"".join(body) + ending(limit, first_due, last_due))
        if limit:
            entry["first_token_at"] = entry["last_token_at"] = written_at
            entry["scheduled_first_token_at"], entry["scheduled_last_token_at"] = (
                first_due,
                last_due,
            )
            entry["output_tokens"] = limit
        if first_answer >= 0:
            entry["first_answer_token_at"] = written_at
        return ex.keep_alive

    if entry["return_progress"]:
        await _send_progress(ex, events, answer_at)
    await ex.send(events.role())
    pauses = dict(fault.pause_points(tokens)) if fault else {}
    sent = await _send_tokens(ex, events.token, limit, schedule, pauses, first_answer)
    if kind == "early":  # the connection closes mid-stream: no finish, no [DONE]
        return False
    if kind == "badjson":
        done = ex.frame(b"data: [DONE]\n\n") + (http.LAST_CHUNK if ex.chunked else b"")
        await ex.send(ex.frame(b"data: {not json\n\n"))
        await ex.send(done)
        return ex.keep_alive
    last_due = schedule.due(sent - 1) if sent else first_due
    if sent:
        entry["scheduled_first_token_at"], entry["scheduled_last_token_at"] = first_due, last_due
    await ex.send(ending(sent, first_due, last_due))
    return ex.keep_alive
