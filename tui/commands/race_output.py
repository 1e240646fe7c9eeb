"""What `race` prints: a table per target and the verdict for people, one JSON object for
scripts. Labels, models and error kinds can hold server or user text: every cell is inert
(bench_output.table makes them so)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui.commands.bench_output import COLD, SIMULATED, duration, rate, table
from tui.engine.metrics.comparison import CONFIDENCE
from tui.engine.race import FIGURES, RaceVerdict, TargetResult

METHOD = (
    "Mann-Whitney U test on the TTFTs (exact below 400 pairs); the difference is the "
    "Hodges-Lehmann estimate with its distribution-free interval"
)


def _order(together: bool, labels: Sequence[str]) -> str:
    if together:
        return "every round's requests at once"
    if len(labels) == 2:
        return "one at a time (A B, B A, …)"
    return "one at a time, the order reversed every other round"


def race_lines(
    results: Sequence[TargetResult],
    verdict: RaceVerdict,
    *,
    rounds: int,
    together: bool,
    cold: bool,
    simulated: bool,
) -> list[str]:
    header = ["target", "model", "endpoint", "TTFT p50", "p90", "min", "max"]
    header += ["total p50", "TPOT p50", "tok/s p50", "ok", "errors"]
    answer = any(r.values("time_to_first_answer_ms") != r.values("ttft_ms") for r in results)
    if answer:
        header.insert(7, "answer p50")
    server = any(r.anatomy() for r in results)
    if server:
        header.insert(-2, "server prefill p50")
    rows = []
    for r in results:
        figures = r.figures()
        ttft = figures["ttft_ms"]
        row = [r.label, r.model, r.endpoint_host]
        row += [duration(ttft[k]) for k in ("p50", "p90", "min", "max")]
        if answer:
            row.append(duration(figures["time_to_first_answer_ms"]["p50"]))
        row += [duration(figures["total_ms"]["p50"]), duration(figures["tpot_ms"]["p50"])]
        row.append(rate(figures["output_tokens_per_s"]["p50"]))
        if server:
            row.append(duration(r.anatomy().get("prefill_ms")))
        errors = r.errors()
        row += [f"{len(r.ok)}/{len(r.records)}", ", ".join(f"{k} ×{n}" for k, n in errors.items())]
        rows.append(row)
    plural = "s" if rounds != 1 else ""
    notes = [f"{rounds} round{plural}, {_order(together, [r.label for r in results])}"]
    notes.append(COLD if cold else "warm: the server's prefix cache may serve repeated prompts")
    if simulated:
        notes.append(SIMULATED)
    lines = table(header, rows)
    lines += ["", f"verdict: {verdict.summary}", f"method: {METHOD}"]
    lines += [f"note: {note}" for note in notes]
    return lines


def race_payload(
    results: Sequence[TargetResult],
    verdict: RaceVerdict,
    *,
    race_id: str,
    rounds: int,
    together: bool,
    cold: bool,
    simulated: bool,
    stopped: bool,
) -> dict[str, Any]:
    targets = []
    for r in results:
        figures = r.figures()
        target: dict[str, Any] = {
            "label": r.label,
            "model": r.model,
            "endpoint_host": r.endpoint_host,
            "trim": r.trim,
            "stream": r.stream,
            "runs": len(r.records),
            "ok": len(r.ok),
            "errors": r.errors(),
            "record_ids": [record.id for record in r.records],
            "ttft_ms_runs": [record.ttft_ms for record in r.records],
            "server_ms": r.anatomy(),
        }
        for name, _ in FIGURES:
            target[name] = figures[name]
        targets.append(target)
    comparison = verdict.comparison
    verdict_object: dict[str, Any] = {
        "faster": verdict.faster,
        "decided": verdict.decided,
        "leader": verdict.leader,
        "runner_up": verdict.runner_up,
        "summary": verdict.summary,
        "method": METHOD,
        "confidence": CONFIDENCE,
    }
    if comparison is not None:
        verdict_object |= {
            "difference_ms": -comparison.difference,
            "interval_ms": (
                [-comparison.high, -comparison.low]
                if comparison.low is not None and comparison.high is not None
                else None
            ),
            "ratio": comparison.ratio,
            "p_value": comparison.p_value,
            "test": comparison.method,
        }
    return {
        "race_id": race_id,
        "rounds": rounds,
        "together": together,
        "cold": cold,
        "simulated": simulated,
        "stopped": stopped,
        "targets": targets,
        "verdict": verdict_object,
    }
