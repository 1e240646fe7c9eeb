"""A request record under OpenTelemetry GenAI semantic-convention names, for export.

Where the conventions name a measure, its name and unit are used (durations in seconds): the
client's own `gen_ai.client.operation.duration` and `gen_ai.client.operation.time_to_first_chunk`
(the first chunk of a stream, what firsttoken calls TTFB; streamed requests only), the server's
own `gen_ai.server.time_to_first_token` (its reported queue + prefill: null when it reported
none; firsttoken's measured TTFT is `firsttoken.time_to_first_token`),
`gen_ai.server.time_per_output_token`, `gen_ai.client.token.usage` (by token type),
`dns.lookup.duration` (the dns phase), and the attributes `gen_ai.operation.name`,
`gen_ai.request.model`, `gen_ai.request.stream`, `server.address` / `server.port`,
`gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`,
`gen_ai.usage.cache_read.input_tokens`, `gen_ai.usage.reasoning.output_tokens`,
`gen_ai.response.finish_reasons` and `error.type` (names from the GenAI registry of
open-telemetry/semantic-conventions-genai, development status). What they do not cover (TTFB's
peers, the other phases of TTFT, a reused connection, TTFT's parts, trimming, the request class
and its verdict, body adjustments, pauses, buffering, simulated figures) is under
`firsttoken.*`. Records carry no API key, so neither does an export.
"""

from __future__ import annotations

import re
from typing import Any

from tui.engine.metrics.anatomy import ttft_anatomy
from tui.engine.metrics.phases import PHASES
from tui.engine.metrics.record import RequestRecord, RequestStatus


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000.0


def _server(endpoint_host: str) -> tuple[str, int | None]:
    host, _, port = endpoint_host.rpartition(":")
    if host and port.isdigit():
        return host.strip("[]"), int(port)
    return endpoint_host, None


def _server_ttft_ms(server: dict[str, Any]) -> float | None:
    """The server's own time to first token: what it reported of its queue and prefill."""
    prefill = server.get("prefill_ms")
    if prefill is None:
        return None
    return float(prefill) + float(server.get("queue_ms") or 0.0)


def _slug(name: str) -> str:
    """ "network + queue" -> "network_and_queue"."""
    return re.sub(r"\W+", "_", name.replace("+", "and")).strip("_")


def otel_attributes(record: RequestRecord) -> dict[str, Any]:
    """One flat object per request; a measure that was not taken is null."""
    address, port = _server(record.endpoint_host)
    input_tokens = record.prompt_tokens_usage
    failed = record.status != RequestStatus.OK
    server = record.server or {}
    phases = record.phases_ms or {}
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": record.model,
        "gen_ai.request.stream": record.streamed,
        "server.address": address,
        "server.port": port,
        "gen_ai.server.time_to_first_token": _seconds(_server_ttft_ms(server)),
        "gen_ai.server.time_per_output_token": _seconds(record.tpot_ms),
        "gen_ai.client.operation.duration": _seconds(record.total_ms),
        "gen_ai.client.operation.time_to_first_chunk": (
            _seconds(record.ttfb_ms) if record.streamed else None
        ),
        "gen_ai.client.token.usage": {"input": input_tokens, "output": record.output_tokens},
        "gen_ai.usage.input_tokens": input_tokens,
        "gen_ai.usage.output_tokens": record.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": server.get("cached_tokens"),
        "gen_ai.usage.reasoning.output_tokens": record.reasoning_tokens,
        "gen_ai.response.finish_reasons": [record.finish_reason] if record.finish_reason else [],
        "error.type": (record.error_kind or record.status.value) if failed else None,
        "firsttoken.record_id": record.id,
        "firsttoken.started_at_epoch": record.started_at_epoch,
        "firsttoken.status": record.status.value,
        "firsttoken.streamed": record.streamed,
        "firsttoken.simulated": record.simulated,
        "firsttoken.time_to_first_token": _seconds(record.ttft_ms),
        "firsttoken.time_to_first_byte": _seconds(record.ttfb_ms),
        "firsttoken.time_to_first_answer": _seconds(record.time_to_first_answer_ms),
        "firsttoken.inter_token_latency.p50": _seconds(record.itl_p50_ms),
        "firsttoken.inter_token_latency.p95": _seconds(record.itl_p95_ms),
        "firsttoken.output_tokens_per_s": record.output_tokens_per_s,
        "firsttoken.output_tokens_source": record.output_tokens_source,
        "firsttoken.prompt_tokens_estimated": record.prompt_tokens_estimated,
        "firsttoken.prompt_tokens_server": record.prompt_tokens_server,
        "firsttoken.prompt_tokens_source": record.prompt_tokens_source,
        "firsttoken.server.source": list(server.get("source") or []),
        "firsttoken.server.queue": _seconds(server.get("queue_ms")),
        "firsttoken.server.prefill": _seconds(server.get("prefill_ms")),
        "firsttoken.server.decode": _seconds(server.get("decode_ms")),
        "firsttoken.server.prefilled_tokens": server.get("prefilled_tokens"),
        "firsttoken.trim.enabled": record.trim_enabled,
        "firsttoken.trim.tokens_before": record.tokens_before,
        "firsttoken.trim.tokens_after": record.tokens_after,
        "firsttoken.trim.dropped_messages": len(record.dropped),
        "firsttoken.retries": record.retries,
        "firsttoken.pauses": record.pauses,
        "firsttoken.longest_gap": _seconds(record.longest_gap_ms),
        "firsttoken.buffered": record.buffered,
        "firsttoken.request_class": record.request_class,
        "firsttoken.request_class_reason": record.request_class_reason,
        "firsttoken.ttft_target": _seconds(record.ttft_target_ms),
        "firsttoken.target_met": record.target_met,
        "dns.lookup.duration": _seconds(phases.get("dns")),
        **{f"firsttoken.phase.{name}": _seconds(phases.get(name)) for name in PHASES},
        "firsttoken.connection.reused": record.connection_reused,
        "firsttoken.adjustments": list(record.adjustments),
    }
    anatomy = ttft_anatomy(record)
    if anatomy is not None:
        for part in anatomy.parts:  # e.g. firsttoken.ttft_part.prefill, ...network_and_queue
            attributes[f"firsttoken.ttft_part.{_slug(part.name)}"] = _seconds(part.ms)
    return attributes
