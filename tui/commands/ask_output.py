"""What `firsttoken ask` prints: the sanitised reply, the summary line, the --json object.

Model output is untrusted: on a terminal, escape sequences could recolour, retitle or rewrite
the screen (or worse, via OSC). They are removed before the text reaches a terminal; the store
keeps the raw text.
"""

from __future__ import annotations

import re
from typing import Any

from tui.engine.metrics import RequestRecord, RequestStatus, TtftLevel

# A complete escape sequence: CSI (ESC [ ... final), OSC / DCS / PM / APC / SOS strings
# (ESC ] ... BEL or ST), or ESC followed by one character; C1 controls too (0x80-0x9F).
_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[ -/]*[0-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x9d\x90\x98\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
)
# What may still become a sequence once the next delta arrives (held back, not printed).
_INCOMPLETE = re.compile(
    r"(?:\x1b(?:\[[0-?]*[ -/]*|[\]PX^_][^\x07\x1b]*\x1b?|[ -/]*)?"
    r"|\x9b[0-?]*[ -/]*|[\x9d\x90\x98\x9e\x9f][^\x07\x1b\x9c]*\x1b?)\Z"
)
# C0 controls except tab and newline, DEL, and stray C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
_MAX_PENDING = 4096  # an "incomplete" sequence longer than this is garbage: drop it


def sanitize(text: str) -> str:
    """Remove terminal control sequences and controls, keeping newlines and tabs."""
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


class TerminalSanitizer:
    """Sanitises a stream of deltas; a sequence split across two deltas is still caught."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, text: str) -> str:
        text = self._pending + text
        self._pending = ""
        tail = _INCOMPLETE.search(text)
        if tail is not None and tail.start() < len(text):
            if len(text) - tail.start() <= _MAX_PENDING:
                self._pending = text[tail.start() :]
            text = text[: tail.start()]
        return sanitize(text)

    def flush(self) -> str:
        """End of stream: an unfinished sequence is dropped, never printed."""
        self._pending = ""
        return ""


_COLORS = {TtftLevel.OK: "32", TtftLevel.WARN: "33", TtftLevel.ERROR: "31"}
# How each body adjustment (tui/engine/dialects.py) reads in the summary line.
_ADJUSTED = {
    "max_completion_tokens": "max_completion_tokens for max_tokens",
    "default_temperature": "its default temperature",
}


def duration(ms: float | None) -> str:
    if ms is None:
        return "–"
    if ms < 1000:
        return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"
    return f"{ms / 1000:.2f} s"


def summary_line(record: RequestRecord, *, color: bool) -> str:
    """One line for stderr, e.g. "TTFT 212 ms · total 2.31 s · TPOT 16.4 ms · 61.2 tok/s ·
    118 out · prompt 412 (≈) · trim off · simulated"."""
    parts: list[str] = []
    if record.status is not RequestStatus.OK:
        parts.append(record.status.value)
    if record.streamed:
        ttft = f"TTFT {duration(record.ttft_ms)}"
    else:
        ttft = f"TTFT=total {duration(record.ttft_ms)} (no streaming)"
    if color and record.ttft_level is not None:
        ttft = f"\x1b[{_COLORS[record.ttft_level]}m{ttft}\x1b[0m"
    parts.append(ttft)
    if record.streamed:
        parts.append(f"total {duration(record.total_ms)}")
        if record.tpot_ms is not None:
            parts.append(f"TPOT {record.tpot_ms:.1f} ms")
        if record.output_tokens_per_s is not None:
            parts.append(f"{record.output_tokens_per_s:.1f} tok/s")
    if record.output_tokens is not None:
        counted = " (≈)" if record.output_tokens_source == "counted" else ""
        parts.append(f"{record.output_tokens} out{counted}")
    if record.prompt_tokens_usage is not None:
        parts.append(f"prompt {record.prompt_tokens_usage}")
    elif record.prompt_tokens_estimated is not None:
        parts.append(f"prompt {record.prompt_tokens_estimated} (≈)")
    if record.trim_enabled:
        trim = f"trim on {record.tokens_before}→{record.tokens_after}"
        if record.dropped:
            trim += f" (-{len(record.dropped)} msg)"
        parts.append(trim)
    else:
        parts.append("trim off")
    if record.request_class and record.target_met is not None:
        verdict = "met" if record.target_met else "missed"
        parts.append(f"{record.request_class} ≤{record.ttft_target_ms:.0f} ms {verdict}")
    if record.retries:
        parts.append(f"{record.retries} retr{'y' if record.retries == 1 else 'ies'}")
    if record.adjustments:
        adjusted = (_ADJUSTED.get(name, name) for name in record.adjustments)
        parts.append("sent as the model wants: " + ", ".join(adjusted))
    if record.simulated:
        parts.append("simulated")
    return " · ".join(parts)


def json_payload(record: RequestRecord, reply: str) -> dict[str, Any]:
    """The --json contract for scripts (documented in the README; keep keys stable)."""
    error = None
    if record.status is RequestStatus.ERROR or record.error_kind:
        error = {"kind": record.error_kind, "message": record.error_message}
    prompt_tokens = None
    if record.prompt_tokens_estimated is not None or record.prompt_tokens_usage is not None:
        prompt_tokens = {
            "estimated": record.prompt_tokens_estimated,
            "exact_encoding": record.prompt_tokens_exact,
            "usage": record.prompt_tokens_usage,
        }
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
        "reply": reply,
        "phases_ms": dict(record.phases_ms) if record.phases_ms is not None else None,
        "connection_reused": record.connection_reused,
        "adjustments": list(record.adjustments),
    }
