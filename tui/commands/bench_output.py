"""What `bench`, `sweep` and `check` print: a table for people, one JSON object for scripts.

Cells and error lines can hold server text (error bodies) and names from the history (models,
titles): each is made inert (tui/engine/inert.py) before it is measured and aligned."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from tui.engine.bench import ClassVerdict, LineFit, VariantResult
from tui.engine.inert import inert_line
from tui.engine.metrics import Thresholds


def duration(ms: float | None) -> str:
    if ms is None:
        return "—"
    return f"{ms:,.0f} ms" if ms < 1000 else f"{ms / 1000:,.2f} s"


def count(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def rate(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def table(
    header: list[str], rows: list[list[str]], bar: bool = False, words: Collection[int] = (0,)
) -> list[str]:
    """Columns aligned: the `words` columns (by index; the first unless told) to the left,
    figures to the right (a last `bar` column to the left, so its bars start together).
    Every cell is shown inert, on one line."""
    header = [inert_line(cell) for cell in header]
    rows = [[inert_line(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    if bar:
        widths[-1] = 0
    lines = []
    for row in [header, *rows]:
        cells = [
            cell.ljust(width) if column in words else cell.rjust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def _runs(result: VariantResult) -> str:
    return f"{len(result.ok)}/{len(result.records)}"


def _errors(results: list[VariantResult]) -> list[str]:
    lines = []
    for result in results:
        for record in result.failures:
            message = record.error_message or record.status.value
            lines.append(inert_line(f"{result.label}: {message}"))
    return lines


def _summary(result: VariantResult) -> dict[str, Any]:
    return {
        "label": result.label,
        "runs": len(result.records),
        "ok": len(result.ok),
        "prompt_tokens": result.prompt_tokens,
        "ttft_ms": {
            "p50": result.percentile("ttft_ms", 50),
            "p95": result.percentile("ttft_ms", 95),
        },
        "total_ms": {
            "p50": result.percentile("total_ms", 50),
            "p95": result.percentile("total_ms", 95),
        },
        "output_tokens_per_s": result.percentile("output_tokens_per_s", 50),
        "ttft_ms_runs": [r.ttft_ms for r in result.records],
        "record_ids": [r.id for r in result.records],
        "errors": [r.error_message or r.status.value for r in result.failures],
    }


def _change(before: float | None, after: float | None) -> str:
    if before is None or after is None or before <= 0:
        return "—"
    return f"{duration(before)} → {duration(after)} ({(after - before) / before:+.0%})"


# -- bench ------------------------------------------------------------------------------------


def bench_lines(results: list[VariantResult]) -> list[str]:
    rows = [
        [
            r.label,
            count(r.prompt_tokens),
            duration(r.percentile("ttft_ms", 50)),
            duration(r.percentile("ttft_ms", 95)),
            duration(r.percentile("total_ms", 50)),
            rate(r.percentile("output_tokens_per_s", 50)),
            _runs(r),
        ]
        for r in results
    ]
    header = ["variant", "prompt tok", "TTFT p50", "TTFT p95", "total p50", "tok/s", "runs"]
    lines = table(header, rows)
    by_label = {r.label: r for r in results}

    def ttft(label: str) -> float | None:
        result = by_label.get(label)
        return result.percentile("ttft_ms", 50) if result else None

    lines.append("")
    lines.append(
        "trimming, streamed:    TTFT "
        + _change(ttft("untrimmed, streamed"), ttft("trimmed, streamed"))
    )
    lines.append(
        "streaming, untrimmed:  TTFT "
        + _change(ttft("untrimmed, not streamed"), ttft("untrimmed, streamed"))
    )
    return lines + _errors(results)


def bench_payload(results: list[VariantResult]) -> dict[str, Any]:
    return {"command": "bench", "variants": [_summary(r) for r in results]}


# -- sweep ------------------------------------------------------------------------------------


def sweep_lines(results: list[VariantResult], fit: LineFit | None) -> list[str]:
    medians = [r.percentile("ttft_ms", 50) for r in results]
    longest = max((m for m in medians if m is not None), default=0.0)
    rows = []
    for result, median in zip(results, medians, strict=True):
        bar = "█" * round(30 * median / longest) if median is not None and longest > 0 else ""
        rows.append(
            [
                result.label,
                count(result.prompt_tokens),
                duration(median),
                duration(result.percentile("ttft_ms", 95)),
                _runs(result),
                bar,
            ]
        )
    lines = table(["asked", "prompt tok", "TTFT p50", "TTFT p95", "runs", ""], rows, bar=True)
    lines.append("")
    if fit is None:
        lines.append("fit: needs TTFT at two prompt lengths or more")
    else:
        lines.append(
            f"fit: TTFT ≈ {fit.intercept_ms:,.0f} ms + {fit.ms_per_token:.3f} ms per prompt token"
        )
    return lines + _errors(results)


def sweep_payload(results: list[VariantResult], fit: LineFit | None) -> dict[str, Any]:
    return {
        "command": "sweep",
        "lengths": [_summary(r) for r in results],
        "fit": None
        if fit is None
        else {"intercept_ms": fit.intercept_ms, "ms_per_prompt_token": fit.ms_per_token},
    }


# -- check ------------------------------------------------------------------------------------


def check_lines(verdicts: list[ClassVerdict], thresholds: Thresholds) -> list[str]:
    rows = []
    for verdict in verdicts:
        level = thresholds.level(verdict.p50_ms)
        rows.append(
            [
                verdict.name,
                f"≤ {duration(verdict.target_ms)}",
                duration(verdict.p50_ms),
                duration(verdict.p95_ms),
                level.value if level is not None else "—",
                _runs(verdict.result),
                "met" if verdict.met else "MISSED",
            ]
        )
    header = ["request class", "TTFT target", "TTFT p50", "TTFT p95", "level", "runs", ""]
    lines = table(header, rows)
    lines.append("")
    if not verdicts:
        lines.append("no request class could be checked (the output limit leaves none)")
    elif all(v.met for v in verdicts):
        lines.append("every target met")
    else:
        missed = ", ".join(v.name for v in verdicts if not v.met)
        lines.append(f"missed: {missed}")
    return lines + _errors([v.result for v in verdicts])


def check_payload(verdicts: list[ClassVerdict]) -> dict[str, Any]:
    return {
        "command": "check",
        "met": bool(verdicts) and all(v.met for v in verdicts),
        "classes": [
            {"target_ms": v.target_ms, "met": v.met, **_summary(v.result)} for v in verdicts
        ],
    }
