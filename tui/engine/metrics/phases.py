"""Where a request's time to first token went, phase by phase, measured by the client itself.

Each phase ends at the event it is named after, and starts where the one before it ended (the
first at the request's start), so their durations add up to the time from the start to the last
phase's end: TTFT when the first token came. In order:

    retries            earlier attempts of this request and the waits between them (backoff,
                       Retry-After, a resend with a body the model takes)
    dns                the host name resolved (absent for an IP address or a kept connection)
    connect            the TCP connection made (to the proxy, when there is one)
    proxy_tunnel       the proxy's CONNECT tunnel set up (https:// through a proxy)
    tls                the TLS handshake done
    stale_connection   a kept connection found closed by the server, given up (rare)
    request_sent       the request written to the socket
    response_head      the response's status line and headers arrived
    first_byte         the first SSE event arrived (TTFB); streamed replies only
    first_token        the first chunk with content, reasoning or a tool call (TTFT)
    body               without streaming: the whole body arrived (TTFT = total)

A request over a kept-alive connection has no dns, connect or tls phase (`connection_reused`).
"""

from __future__ import annotations

from dataclasses import dataclass

RETRIES = "retries"
FIRST_BYTE = "first_byte"
FIRST_TOKEN = "first_token"
BODY = "body"

PHASES = (
    RETRIES,
    "dns",
    "connect",
    "proxy_tunnel",
    "tls",
    "stale_connection",
    "request_sent",
    "response_head",
    FIRST_BYTE,
    FIRST_TOKEN,
    BODY,
)
# The phases a new connection adds (what a reused one does without).
SET_UP = ("dns", "connect", "proxy_tunnel", "tls")


@dataclass(frozen=True, slots=True)
class AttemptTrace:
    """The last attempt of a request: when it started, what the HTTP client stamped, and
    whether it went over a kept connection (None when it never had one)."""

    started_at: float
    stamps: tuple[tuple[str, float], ...]
    reused: bool | None


def phase_durations(
    started_at: float,
    trace: AttemptTrace,
    *,
    first_byte_at: float | None,
    first_token_at: float | None,
    streamed: bool,
) -> dict[str, float]:
    """Phase name -> milliseconds, in the order they happened, up to the first token (or as far
    as the request got). The durations add up to the last phase's end minus `started_at`."""
    points: list[tuple[str, float]] = []
    if trace.started_at > started_at:
        points.append((RETRIES, trace.started_at))
    points.extend(trace.stamps)
    if streamed:
        if first_byte_at is not None:
            points.append((FIRST_BYTE, first_byte_at))
        if first_token_at is not None:
            points.append((FIRST_TOKEN, first_token_at))
    elif first_token_at is not None:
        points.append((BODY, first_token_at))
    durations: dict[str, float] = {}
    previous = started_at
    for name, at in points:
        if name in durations:  # never expected; a phase is kept once, its time not lost
            durations[name] += (at - previous) * 1000.0
        else:
            durations[name] = (at - previous) * 1000.0
        previous = at
    return durations
