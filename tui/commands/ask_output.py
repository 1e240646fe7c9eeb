"""What `firsttoken ask` prints: the summary line and the --json object (the reply itself goes
through tui/engine/text/inert.py on its way to stdout)."""

from __future__ import annotations

from typing import Any

from tui.engine.metrics.anatomy import REMAINDER, ttft_anatomy
from tui.engine.metrics.kv_cache import kv_phrase
from tui.engine.metrics.record import RequestRecord, RequestStatus, TtftLevel
from tui.engine.text.figures import duration
from tui.engine.text.inert import inert_line
from tui.engine.text.redact import redact_text
from tui.engine.tokens.server_counts import SERVER, usage_agrees

_COLORS = {TtftLevel.OK: "32", TtftLevel.WARN: "33", TtftLevel.ERROR: "31"}
# How each body adjustment (tui/engine/chat/dialects.py) reads in the summary line.
_ADJUSTED = {
    "max_completion_tokens": "max_completion_tokens for max_tokens",
    "default_temperature": "its default temperature",
    "no_return_progress": "no prompt progress asked",
}


def _split(record: RequestRecord) -> str:
    """TTFT's parts in brackets, when there is more than one (engine/metrics/anatomy.py)."""
    anatomy = ttft_anatomy(record)
    if anatomy is None or anatomy.note is not None:
        return ""
    if len(anatomy.parts) == 1 and anatomy.parts[0].measured_by == REMAINDER:
        return ""  # nothing reported or measured to split it by
    return f" [{anatomy.compact()}]"


SERVER_COUNT = "the server's count"
LOCAL_COUNT = "the local count"


def _prompt(record: RequestRecord) -> str | None:
    """The prompt's count, saying whose: the server's where it gave one (the templated
    prompt, exact), with its cached part; else the local estimate (≈)."""
    server = record.server or {}
    cached = server.get("cached_tokens")
    counted = record.prompt_tokens_server
    exact = record.prompt_tokens_usage or server.get("prompt_tokens")
    if exact is None and counted is not None and record.prompt_tokens_source == SERVER:
        exact = counted  # the server's count of the templated prompt
    if exact is not None:
        text = f"prompt {exact:,} tokens ({SERVER_COUNT})"
        if isinstance(cached, int) and cached > 0:
            text = f"cached {cached:,} of {exact:,} prompt tokens ({SERVER_COUNT})"
        if counted is not None and usage_agrees(counted, exact) is False:
            text += f"; its tokenizer counted ≈{counted:,}"  # usage wins, the gap is said
        return text
    if counted is not None:  # the texts the server's, the template's tokens the local recipe's
        return f"prompt ≈{counted:,} tokens (the server's tokenizer, the local template)"
    if record.prompt_tokens_estimated is not None:
        return f"prompt ≈{record.prompt_tokens_estimated:,} tokens ({LOCAL_COUNT})"
    return None


def _trim(record: RequestRecord) -> str:
    """What trimming did, in the local count it works in (the messages, without the server's
    template: so it can read below the server's count of the same prompt)."""
    if not record.trim_enabled:
        return "trim off"
    before, after = record.tokens_before, record.tokens_after
    if before is None or after is None:
        return "trim on"
    dropped = len(record.dropped)
    if not dropped:
        return f"trim on: {after:,} tokens by {LOCAL_COUNT}, within the budget, nothing dropped"
    messages = f"{dropped} message{'s' if dropped != 1 else ''} dropped"
    return f"trim on: {before:,} → {after:,} tokens by {LOCAL_COUNT} ({messages})"


def summary_line(record: RequestRecord, *, color: bool) -> str:
    """One line for stderr, e.g. "TTFT 212 ms [prefill 180 ms · network + queue 32 ms] ·
    total 2.31 s · TPOT 16.4 ms · 61.2 tok/s · 118 out · cached 300 of 412 prompt tokens (the
    server's count) · trim off · short_qa ≤500 ms met (a short prompt, no length asked) ·
    simulated"."""
    parts: list[str] = []
    if record.status is not RequestStatus.OK:
        parts.append(record.status.value)
    if record.streamed:
        ttft = f"TTFT {duration(record.ttft_ms)}"
    else:
        ttft = f"TTFT=total {duration(record.ttft_ms)} (no streaming)"
    if color and record.ttft_level is not None:
        ttft = f"\x1b[{_COLORS[record.ttft_level]}m{ttft}\x1b[0m"
    parts.append(ttft + _split(record))
    answer = record.time_to_first_answer_ms
    ttft_ms = record.ttft_ms
    # The model thought first: its answer came later than its first token.
    if record.streamed and answer is not None and ttft_ms is not None and answer - ttft_ms >= 0.5:
        parts.append(f"answer {duration(answer)}")
    if record.streamed:
        parts.append(f"total {duration(record.total_ms)}")
        if record.tpot_ms is not None:
            parts.append(f"TPOT {record.tpot_ms:.1f} ms")
        if record.draft_acceptance is not None:
            parts.append(f"draft {record.draft_acceptance:.0%} accepted")
        if record.output_tokens_per_s is not None:
            parts.append(f"{record.output_tokens_per_s:.1f} tok/s")
    if record.output_tokens is not None:
        counted = " (≈)" if record.output_tokens_source == "counted" else ""
        thinking = f", {record.reasoning_tokens:,} thinking" if record.reasoning_tokens else ""
        parts.append(f"{record.output_tokens:,} out{counted}{thinking}")
    if (prompt := _prompt(record)) is not None:
        parts.append(prompt)
    if record.prefill_tokens_per_s is not None:
        parts.append(f"prefill {record.prefill_tokens_per_s:,.0f} tok/s")
    if record.kv_cache is not None and (kv := kv_phrase(record.kv_cache)) is not None:
        parts.append(kv)
    parts.append(_trim(record))
    if record.request_class and record.target_met is not None:
        verdict = "met" if record.target_met else "missed"
        request_class = inert_line(record.request_class)
        why = f" ({record.request_class_reason})" if record.request_class_reason else ""
        parts.append(f"{request_class} ≤{record.ttft_target_ms:.0f} ms {verdict}{why}")
    if record.pauses:
        longest = f", longest {duration(record.longest_gap_ms)}" if record.longest_gap_ms else ""
        parts.append(f"{record.pauses} pause{'' if record.pauses == 1 else 's'}{longest}")
    if record.buffered:
        parts.append("buffered")
    if record.retries:
        parts.append(f"{record.retries} retr{'y' if record.retries == 1 else 'ies'}")
    if record.adjustments:
        adjusted = (_ADJUSTED.get(name, name) for name in record.adjustments)
        parts.append("sent as the model wants: " + ", ".join(adjusted))
    if record.simulated:
        parts.append("simulated")
    return " · ".join(parts)


def json_payload(
    record: RequestRecord, reply: str, chat_id: int | None = None, reasoning: str | None = None
) -> dict[str, Any]:
    """The --json contract for scripts (docs/headless.md#ask; keys are only added)."""
    error = None
    if record.status is RequestStatus.ERROR or record.error_kind:
        error = {"kind": record.error_kind, "message": record.error_message}
    prompt_tokens = None
    server = record.server or {}
    if (
        record.prompt_tokens_estimated is not None
        or record.prompt_tokens_usage is not None
        or record.prompt_tokens_server is not None
    ):
        counted = (
            record.prompt_tokens_server
            if record.prompt_tokens_server is not None
            else record.prompt_tokens_estimated
        )
        prompt_tokens = {
            # Whether the server's usage matched firsttoken's own count of the prompt (the
            # server tokenizer's, else the local estimate); null when either is missing.
            "agrees": usage_agrees(counted, record.prompt_tokens_usage),
            "estimated": record.prompt_tokens_estimated,
            "exact_encoding": record.prompt_tokens_exact,
            "usage": record.prompt_tokens_usage,
            "server": record.prompt_tokens_server,
            "source": record.prompt_tokens_source,
            "cached": server.get("cached_tokens"),
        }
    anatomy = ttft_anatomy(record)
    return {
        "status": record.status.value,
        "error": error,
        "model": record.model,
        "endpoint_host": record.endpoint_host,
        "streamed": record.streamed,
        "ttfb_ms": record.ttfb_ms,
        "ttft_ms": record.ttft_ms,
        "total_ms": record.total_ms,
        "tpot_ms": record.tpot_ms,
        "itl_p50_ms": record.itl_p50_ms,
        "itl_p95_ms": record.itl_p95_ms,
        "output_tokens": record.output_tokens,
        "output_tokens_source": record.output_tokens_source,
        "output_tokens_per_s": record.output_tokens_per_s,
        "prompt_tokens": prompt_tokens,
        "trim": {
            "enabled": record.trim_enabled,
            "tokens_before": record.tokens_before,
            "tokens_after": record.tokens_after,
            "dropped": [{"index": d.index, "reason": d.reason} for d in record.dropped],
        },
        "retries": record.retries,
        "simulated": record.simulated,
        "ttft_level": record.ttft_level.value if record.ttft_level else None,
        "request_class": record.request_class,
        "ttft_target_ms": record.ttft_target_ms,
        "target_met": record.target_met,
        "finish_reason": record.finish_reason,
        "id": record.id,
        "chat_id": chat_id,
        "reply": reply,
        "phases_ms": dict(record.phases_ms) if record.phases_ms is not None else None,
        "connection_reused": record.connection_reused,
        "adjustments": list(record.adjustments),
        "request_class_reason": record.request_class_reason,
        "time_to_first_answer_ms": record.time_to_first_answer_ms,
        "reasoning": reasoning or None,
        "reasoning_tokens": record.reasoning_tokens,
        "server": record.server,
        "anatomy": anatomy.as_dict() if anatomy is not None else None,
        "pauses": record.pauses if record.streamed and record.ttft_ms is not None else None,
        "longest_gap_ms": record.longest_gap_ms,
        "buffered": record.buffered,
        "notices": list(record.notices),
        "prompt_progress": record.prompt_progress,
        "prefill_tokens_per_s": record.prefill_tokens_per_s,
        "draft_acceptance": record.draft_acceptance,
        "kv_cache": record.kv_cache,
        "kv_cache_bytes": (record.kv_cache or {}).get("prompt_bytes"),
    }


def error_payload(kind: str, message: str) -> dict[str, Any]:
    """The --json object for a failure before any request (a usage or config error): every
    key of the contract present, `status` "error", the rest null."""
    template = json_payload(RequestRecord(model="", endpoint_host="", streamed=False), "")
    payload: dict[str, Any] = dict.fromkeys(template)
    payload.update(status="error", error={"kind": kind, "message": redact_text(message)})
    return payload
