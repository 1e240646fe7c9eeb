"""Whether a streamed reply was held back on its way and delivered in one burst at the end.

A buffering proxy or gateway (nginx's `proxy_buffering`, some API gateways and corporate
proxies) or a client library that reads the whole body keeps a stream's events and releases
them together when the reply ends: streaming is on, yet the first token shows up with the last
one, and TTFT is the whole reply's time. This is decided from the receipt times, never guessed:

- the reply was streamed and at least `MIN_CHUNKS` chunks carried tokens;
- every token-carrying chunk arrived within `BURST_MS` of the first one, and the first came at
  95 % or more of the total time, which was at least `MIN_TOTAL_MS` (a reply over sooner is
  too quick to matter, or to tell from a fast server);
- and the burst is impossible for a real stream: at least `MANY_CHUNKS` chunks (over 3,800
  tokens/s), or the server's own decode time (llama.cpp's `timings`, vLLM's `metrics`) at
  least `DECODE_FACTOR` times the burst and `MIN_DECODE_MS` or more.

A short reply from a very fast server can arrive in one network read too: without the server's
decode time it is not called buffered.
"""

from __future__ import annotations

from collections.abc import Sequence

MIN_CHUNKS = 3
BURST_MS = 5.0
MIN_TOTAL_MS = 100.0
MANY_CHUNKS = 20
DECODE_FACTOR = 20.0
MIN_DECODE_MS = 100.0


def is_buffered(
    *,
    streamed: bool,
    started_at: float,
    token_times: Sequence[float],
    server_decode_ms: float | None,
) -> bool | None:
    """True: the stream came in one burst at the end; False: it streamed; None: not judged
    (not streamed, or too few token chunks to tell)."""
    if not streamed or len(token_times) < MIN_CHUNKS:
        return None
    first, last = token_times[0], token_times[-1]
    burst_ms = (last - first) * 1000.0
    total_ms = (last - started_at) * 1000.0
    if burst_ms > BURST_MS or total_ms < MIN_TOTAL_MS:
        return False
    if (first - started_at) * 1000.0 < 0.95 * total_ms:
        return False
    if len(token_times) >= MANY_CHUNKS:
        return True
    return (
        server_decode_ms is not None
        and server_decode_ms >= MIN_DECODE_MS
        and server_decode_ms >= DECODE_FACTOR * max(burst_ms, 1.0)
    )


def buffered_message() -> str:
    """What `ask` and `check` say about a buffered stream, with the fix."""
    return (
        "streaming is on, but the reply arrived all at once, at its end: a proxy or gateway "
        "between here and the model is buffering the stream, so TTFT is the whole reply's "
        "time; turn buffering off for this route (nginx: `proxy_buffering off;` or the "
        "`X-Accel-Buffering: no` response header) or point base_url past the proxy"
    )
