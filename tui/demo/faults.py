"""The demo endpoint's fault injection: which failure a /fault/<spec>/v1 path asks for.

A spec is one of FAULT_SPECS (docs/demo.md#faults lists them). Status faults
answer with OpenAI's error shapes; `xN` status faults count requests per spec, so a client's
retries can be tested. `stall-<ms>` and `pause-<ms>[x<n>]` hold the reply back mid-stream and
then finish it; `buffered` holds a stream's whole body until its last token is due, as a
buffering proxy does.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

FAULT_PATH = re.compile(r"^/fault/([^/]+)(/.*)?$")
_STATUS_FAULT = re.compile(r"^(401|403|429|500|503)(?:x(\d+))?$")
_STALL_FAULT = re.compile(r"^stall-(\d+)$")
_PAUSE_FAULT = re.compile(r"^pause-(\d+)(?:x([1-9]\d{0,2}))?$")
SHAPE_FAULTS = ("early", "badjson", "context", "empty", "nousage", "buffered", "hang", "drop")
FAULT_SPECS = (
    "401",
    "403",
    "429",
    "429x<N>",
    "500",
    "503x<N>",
    "stall-<ms>",
    "pause-<ms>",
    "pause-<ms>x<N>",
    *SHAPE_FAULTS,
)
EARLY_TOKENS = 5  # early: this many tokens, then the connection closes
BADJSON_TOKENS = 3  # badjson: this many tokens, then `data: {not json`
STALL_AFTER_TOKENS = 5  # stall-<ms>: the pause comes after this many tokens

# OpenAI's error shapes: (message, type, code).
ERRORS: dict[int, tuple[str, str, str]] = {
    401: (
        "Incorrect API key provided (simulated fault).",
        "invalid_request_error",
        "invalid_api_key",
    ),
    403: ("This key may not use this model (simulated fault).", "request_forbidden", "forbidden"),
    429: (
        "Rate limit reached for requests (simulated fault). Please try again in 1s.",
        "requests",
        "rate_limit_exceeded",
    ),
    500: (
        "The server had an error while processing your request (simulated fault).",
        "server_error",
        "internal_error",
    ),
    503: (
        "The engine is currently overloaded, please try again later (simulated fault).",
        "server_error",
        "service_unavailable",
    ),
}


@dataclass(frozen=True)
class Fault:
    spec: str
    status: int | None = None  # answer with this HTTP error...
    times: int | None = None  # ...for the first `times` requests under this spec (None: always)
    stall_ms: float = 0.0
    kind: str | None = None  # one of SHAPE_FAULTS
    pause_ms: float = 0.0  # pause-<ms>[x<n>]: `pauses` pauses of this long, spread evenly
    pauses: int = 0

    def pause_points(self, tokens: int) -> list[tuple[int, float]]:
        """(after this many tokens, seconds) of each pause in a reply of `tokens` tokens."""
        if self.stall_ms > 0:
            return [(STALL_AFTER_TOKENS, self.stall_ms / 1000)]
        if self.pauses <= 0:
            return []
        after = {round(i * tokens / (self.pauses + 1)) for i in range(1, self.pauses + 1)}
        return [(n, self.pause_ms / 1000) for n in sorted(after) if 0 < n < tokens]

    def held_s(self) -> float:
        """All the pausing a non-streamed reply waits before its body goes out."""
        return self.stall_ms / 1000 + self.pauses * self.pause_ms / 1000


def parse_fault(spec: str) -> Fault | None:
    """The fault a path segment asks for, or None when the spec is unknown."""
    if match := _STATUS_FAULT.match(spec):
        times = int(match.group(2)) if match.group(2) else None
        return Fault(spec, status=int(match.group(1)), times=times)
    if match := _STALL_FAULT.match(spec):
        return Fault(spec, stall_ms=float(match.group(1)))
    if match := _PAUSE_FAULT.match(spec):
        count = int(match.group(2)) if match.group(2) else 1
        return Fault(spec, pause_ms=float(match.group(1)), pauses=count)
    return Fault(spec, kind=spec) if spec in SHAPE_FAULTS else None


class FaultCounter:
    """Requests seen per status-fault spec, for the `xN` faults (one counter per server)."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def status(self, fault: Fault | None) -> int | None:
        """The error status this request gets, counting requests per spec for `xN` faults."""
        if fault is None or fault.status is None:
            return None
        seen = self._counts.get(fault.spec, 0) + 1
        self._counts[fault.spec] = seen
        return fault.status if fault.times is None or seen <= fault.times else None


def error_parts(status: int) -> tuple[str, str, str, list[tuple[str, str]]]:
    """(message, type, code, extra headers) of a status fault's answer."""
    message, type_, code = ERRORS[status]
    extra = [("Retry-After", "1")] if status == 429 else []
    return message, type_, code, extra


def context_error_message(prompt_tokens: int) -> str:
    """The `context` fault's 400 message: OpenAI's wording, with a limit the prompt exceeds."""
    limit = 8192 if prompt_tokens > 8192 else max(1, prompt_tokens // 2)
    return (
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {prompt_tokens} tokens. Please reduce the length of the "
        "messages. (simulated fault)"
    )


async def wait_for_close(reader: asyncio.StreamReader) -> None:
    """`hang`: answer nothing; return once the client gives up and closes the connection."""
    while await reader.read(65536):
        pass  # anything the client still sends is ignored, as a hung server would
