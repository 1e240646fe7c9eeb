"""Statistics over kept latency records, per model and endpoint: what `firsttoken stats` and the
app's statistics screen show.

Percentiles use linear interpolation between closest ranks (numpy's default, as
docs/metrics.md defines them). TTFT and TPOT are taken over streamed requests only: without
streaming TTFT is the whole reply's time and would pass for a slow first token. Total time is
taken over every successful request.

SLO attainment is the share of successful requests that met their class's TTFT target (each
record keeps its class and target). Goodput, as vLLM's `bench serve --goodput` and AIPerf define
it, is the rate of requests that succeeded and met their targets: good requests over the span
from the group's first request to the end of its last one (for a history kept over days that
span includes the idle time between uses; the count of good requests is given beside it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tui.engine.metrics.record import percentile_of_sorted

PERCENTILES = (50, 90, 95, 99)


@dataclass(slots=True)
class LatencyRow:
    """The parts of one kept record that statistics read (not frozen: a frozen dataclass
    costs a setattr call a field, and `stats` makes one a record)."""

    model: str
    endpoint_host: str
    started_at_epoch: float
    ok: bool
    error_kind: str | None
    streamed: bool
    simulated: bool
    ttft_ms: float | None
    total_ms: float | None
    tpot_ms: float | None
    time_to_first_answer_ms: float | None = None
    target_met: bool | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None


def spread(values: Iterable[float]) -> dict[str, float | None]:
    """p50, p90, p95 and p99 of `values` ({"p50": None, ...} when there are none)."""
    ordered = sorted(values)
    return {f"p{q}": percentile_of_sorted(ordered, q) for q in PERCENTILES}


@dataclass(slots=True)
class GroupStats:
    """One model at one endpoint."""

    model: str
    endpoint_host: str
    simulated: bool
    count: int = 0
    ok: int = 0
    streamed_ok: int = 0
    ttft_ms: dict[str, float | None] = field(default_factory=dict)
    time_to_first_answer_ms: dict[str, float | None] = field(default_factory=dict)
    tpot_ms: dict[str, float | None] = field(default_factory=dict)
    total_ms: dict[str, float | None] = field(default_factory=dict)
    judged: int = 0  # successful requests with a TTFT target
    met: int = 0
    first_epoch: float = 0.0
    last_end_epoch: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0  # over the requests whose cached share is known
    cached_tokens: int = 0
    ttft_values: list[float] = field(default_factory=list)  # streamed, oldest first
    ttft_epochs: list[float] = field(default_factory=list)

    @property
    def attainment(self) -> float | None:
        """The share of successful requests with a target that met it."""
        return self.met / self.judged if self.judged else None

    @property
    def span_s(self) -> float:
        return max(0.0, self.last_end_epoch - self.first_epoch)

    @property
    def goodput_per_s(self) -> float | None:
        """Good requests (succeeded and met their target) per second of the group's span."""
        return self.met / self.span_s if self.span_s > 0 else None

    @property
    def cached_share(self) -> float | None:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "endpoint_host": self.endpoint_host,
            "simulated": self.simulated,
            "count": self.count,
            "ok": self.ok,
            "streamed_ok": self.streamed_ok,
            "ttft_ms": self.ttft_ms,
            "time_to_first_answer_ms": self.time_to_first_answer_ms,
            "tpot_ms": self.tpot_ms,
            "total_ms": self.total_ms,
            "slo": {"judged": self.judged, "met": self.met, "attainment": self.attainment},
            "goodput": {"good": self.met, "span_s": self.span_s, "per_s": self.goodput_per_s},
            "errors": dict(sorted(self.errors.items())),
            "cached_share": self.cached_share,
            "first_epoch": self.first_epoch,
            "last_epoch": self.last_end_epoch,
        }


DEMO_HOST = "demo"  # the embedded endpoint's records: a new port at every start, one server


def _key(row: LatencyRow) -> tuple[str, str, bool]:
    return row.model, DEMO_HOST if row.simulated else row.endpoint_host, row.simulated


def group_stats(rows: Sequence[LatencyRow]) -> list[GroupStats]:
    """Per model and endpoint (the embedded demo's simulated records as one endpoint, `demo`),
    the most requests first; `rows` oldest first."""
    groups: dict[tuple[str, str, bool], GroupStats] = {}
    samples: dict[tuple[str, str, bool], tuple[list[float], list[float], list[float]]] = {}
    for row in rows:
        key = _key(row)
        group = groups.get(key)
        if group is None:
            group = groups[key] = GroupStats(*key)
            group.first_epoch = row.started_at_epoch
            samples[key] = ([], [], [])
        answers, tpots, totals = samples[key]
        group.count += 1
        end = row.started_at_epoch + (row.total_ms or 0.0) / 1000.0
        group.first_epoch = min(group.first_epoch, row.started_at_epoch)
        group.last_end_epoch = max(group.last_end_epoch, end)
        if not row.ok:
            kind = row.error_kind or "unknown"
            group.errors[kind] = group.errors.get(kind, 0) + 1
            continue
        group.ok += 1
        if row.total_ms is not None:
            totals.append(row.total_ms)
        if row.streamed and row.ttft_ms is not None:
            group.streamed_ok += 1
            group.ttft_values.append(row.ttft_ms)
            group.ttft_epochs.append(row.started_at_epoch)
            if row.time_to_first_answer_ms is not None:
                answers.append(row.time_to_first_answer_ms)
            if row.tpot_ms is not None:
                tpots.append(row.tpot_ms)
        if row.target_met is not None:
            group.judged += 1
            group.met += int(row.target_met)
        if row.cached_tokens is not None and row.prompt_tokens:
            group.prompt_tokens += row.prompt_tokens
            group.cached_tokens += min(row.cached_tokens, row.prompt_tokens)
    for key, group in groups.items():
        answers, tpots, totals = samples[key]
        group.ttft_ms = spread(group.ttft_values)
        group.time_to_first_answer_ms = spread(answers)
        group.tpot_ms = spread(tpots)
        group.total_ms = spread(totals)
    return sorted(groups.values(), key=lambda g: (-g.count, g.model, g.endpoint_host))
