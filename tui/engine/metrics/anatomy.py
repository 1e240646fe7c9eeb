"""A request's TTFT taken apart for display: the client's measured phases, the server's own
figures, and what remains; every part measured, none guessed.

From the record:
- the client's phases (`phases_ms`, when the HTTP client stamps them): earlier attempts
  (`retries`), the connection's set-up (DNS, connect, proxy tunnel, TLS; absent on a kept
  connection) and writing the request (`request`). Without `phases_ms` they are not split out;
- the rest of TTFT is waiting for the server: the part the server reports of it (`queue`,
  `prefill`, and for a reply that was not streamed, where TTFT is the whole reply, `decode`)
  comes from its own figures (the record's `server`), and what is left is `network + queue`
  (`network` when the server reported its queue too; `server + network` when it reported
  nothing): the difference of two measurements, labelled as such.

The parts always add up to the record's TTFT. When the server's figures exceed the time the
client waited for it (a server whose clock or definition differs), they are not used to split
it, and `note` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tui.engine.metrics.record import RequestRecord

CLIENT = "client"  # measured by firsttoken's HTTP client
SERVER = "server"  # reported by the server about itself
REMAINDER = "remainder"  # TTFT minus every other part

# phases_ms names (the HTTP client's) grouped into the parts shown.
_SET_UP = ("dns", "connect", "proxy_tunnel", "tls", "stale_connection")
_CLIENT_GROUPS = (
    ("retries", ("retries",)),
    ("connection", _SET_UP),
    ("request", ("request_sent",)),
)
# Slack for rounding: the server's figures are rounded (llama.cpp: microseconds).
TOLERANCE_MS = 1.0


@dataclass(frozen=True, slots=True)
class Part:
    name: str  # "connection", "prefill", "network + queue", ...
    ms: float
    measured_by: str  # CLIENT, SERVER or REMAINDER

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ms": self.ms, "measured_by": self.measured_by}


@dataclass(frozen=True, slots=True)
class Anatomy:
    ttft_ms: float
    parts: tuple[Part, ...]
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "ttft_ms": self.ttft_ms,
            "parts": [part.as_dict() for part in self.parts],
            "note": self.note,
        }

    def compact(self) -> str:
        """One short line: "connection 12 ms · prefill 480 ms · network + queue 20 ms"."""
        return " · ".join(f"{part.name} {_ms(part.ms)}" for part in self.parts)


def _ms(ms: float) -> str:
    if abs(ms) >= 1000:
        return f"{ms / 1000:.2f} s"
    return f"{ms:.0f} ms" if abs(ms) >= 10 else f"{ms:.1f} ms"


def _client_parts(phases: dict[str, float] | None) -> list[Part]:
    if not phases:
        return []
    parts = []
    for name, members in _CLIENT_GROUPS:
        if any(member in phases for member in members):
            parts.append(Part(name, sum(phases.get(member, 0.0) for member in members), CLIENT))
    return parts


def _server_parts(server: dict[str, Any] | None, streamed: bool) -> list[Part]:
    if not server:
        return []
    parts = []
    for key, name in (("queue_ms", "queue"), ("prefill_ms", "prefill")):
        value = server.get(key)
        if isinstance(value, int | float):
            parts.append(Part(name, float(value), SERVER))
    decode = server.get("decode_ms")
    if not streamed and isinstance(decode, int | float) and parts:
        parts.append(Part("decode", float(decode), SERVER))  # TTFT is the whole reply here
    return parts


def _remainder_name(server_parts: list[Part]) -> str:
    names = {part.name for part in server_parts}
    if not names:
        return "server + network"
    return "network" if "queue" in names else "network + queue"


def ttft_anatomy(record: RequestRecord) -> Anatomy | None:
    """TTFT's parts (see the module docstring), or None when there was no first token."""
    ttft = record.ttft_ms
    if ttft is None:
        return None
    # phases_ms is set by HTTP clients that stamp their phases; older records lack it.
    phases = getattr(record, "phases_ms", None)
    client = _client_parts(phases if isinstance(phases, dict) else None)
    server = _server_parts(record.server, record.streamed)
    waited = ttft - sum(part.ms for part in client)
    note = None
    if server and sum(part.ms for part in server) > waited + TOLERANCE_MS:
        note = "the server's figures exceed the time waited for it: not used to split TTFT"
        server = []
    rest = waited - sum(part.ms for part in server)
    parts = [*client, *server, Part(_remainder_name(server), rest, REMAINDER)]
    return Anatomy(ttft, tuple(parts), note)
