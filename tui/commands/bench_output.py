"""What `bench`, `sweep` and `check` print: a table for people, one JSON object for scripts.

Cells and error lines can hold server text (error bodies) and names from the history (models,
titles): each is made inert (tui/engine/text/inert.py) before it is measured and aligned."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from tui.engine.bench import ClassVerdict, LineFit, VariantResult, fit_warning
from tui.engine.metrics.buffering import buffered_message
from tui.engine.metrics.kv_cache import human_bytes
from tui.engine.metrics.record import Thresholds
from tui.engine.text.inert import inert_line


@dataclass(frozen=True)
class Measured:
    """What a run of bench, sweep or check measured, and where."""

    results: list[VariantResult]
    stopped: bool  # Ctrl-C ended it early
    endpoint: str  # host:port
    model: str
    simulated: bool
    warmup: int

    def about(self) -> dict[str, Any]:
        """The keys every JSON object of these commands shares."""
        return {
            "endpoint": self.endpoint,
            "model": self.model,
            "simulated": self.simulated,
            "warmup": self.warmup,
        }


COLD = (
    "each request cold: a tag of its own opens its prompt, so the server's prefix cache cannot "
    "serve it (cached: the template's opening it still reused)"
)
SIMULATED = "simulated: the embedded demo endpoint's latency model, not a real server"


def duration(ms: float | None) -> str:
    if ms is None:
        return "—"
    return f"{ms:,.0f} ms" if ms < 1000 else f"{ms / 1000:,.2f} s"


def count(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def rate(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


# The widest a table cell is shown: a longer one (a model id, a title, an error from a server)
# is cut with "…", so one long name cannot widen every row of a table.
CELL_WIDTH = 60


def cell(text: str, width: int = CELL_WIDTH) -> str:
    """One table cell: inert, on one line, at most `width` characters."""
    shown = inert_line(text[: 4 * width])  # (a stand-in is at most 4 characters)
    return shown if len(shown) <= width else shown[: width - 1] + "…"


def table(
    header: list[str], rows: list[list[str]], bar: bool = False, words: Collection[int] = (0,)
) -> list[str]:
    """Columns aligned: the `words` columns (by index; the first unless told) to the left,
    figures to the right (a last `bar` column to the left, so its bars start together).
    Every cell is shown inert, on one line, cut at CELL_WIDTH characters."""
    header = [cell(text) for text in header]
    rows = [[cell(text) for text in row] for row in rows]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    if bar:
        widths[-1] = 0
    lines = []
    for row in [header, *rows]:
        cells = [
            text.ljust(width) if column in words else text.rjust(width)
            for column, (text, width) in enumerate(zip(row, widths, strict=True))
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


def _notes(measured: Measured, cold: bool = True) -> list[str]:
    notes = []
    if cold:
        notes.append(COLD)
    if measured.warmup:
        many = "s" if measured.warmup > 1 else ""
        notes.append(f"warm-up: {measured.warmup} request{many} first, discarded")
    if measured.simulated:
        notes.append(SIMULATED)
    return notes


def _kv(result: VariantResult) -> dict[str, Any] | None:
    """The KV cache of the variant's prompt (its last successful run's), when the model's
    shape is known."""
    return next((r.kv_cache for r in reversed(result.ok) if r.kv_cache is not None), None)


def _kv_cell(result: VariantResult) -> str:
    kv = _kv(result)
    prompt = kv.get("prompt_bytes") if kv is not None else None
    return human_bytes(prompt) if isinstance(prompt, int) else "—"


def _summary(result: VariantResult) -> dict[str, Any]:
    kv = _kv(result)
    return {
        "label": result.label,
        "kv_cache_bytes": kv.get("prompt_bytes") if kv is not None else None,
        "kv_cache": kv,
        "trim": result.trim,
        "stream": result.stream,
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
        "cached_tokens": {"p50": result.server_percentile("cached_tokens", 50)},
        "server_prefill_ms": {
            "p50": result.server_percentile("prefill_ms", 50),
            "p95": result.server_percentile("prefill_ms", 95),
        },
        "cached_tokens_runs": [
            r.server.get("cached_tokens") if r.server is not None else None for r in result.records
        ],
        "buffered": result.buffered,
    }


def _change(before: float | None, after: float | None) -> str:
    if before is None or after is None or before <= 0:
        return "—"
    return f"{duration(before)} → {duration(after)} ({(after - before) / before:+.0%})"


def _cached(result: VariantResult) -> str:
    cached = result.server_percentile("cached_tokens", 50)
    return "—" if cached is None else f"{cached:,.0f}"


def _prefill(result: VariantResult) -> str:
    return duration(result.server_percentile("prefill_ms", 50))


# -- bench ------------------------------------------------------------------------------------


def _kv_type(results: list[VariantResult]) -> str:
    kv = next((found for r in results if (found := _kv(r)) is not None), None)
    return str(kv.get("cache_type")) if kv is not None else ""


def bench_lines(measured: Measured) -> list[str]:
    results = measured.results
    reported = any(r.server_percentile("prefill_ms", 50) is not None for r in results)
    kv_known = any(_kv(r) is not None for r in results)
    rows = []
    for r in results:
        row = [r.label, count(r.prompt_tokens), _cached(r)]
        row += [_kv_cell(r)] if kv_known else []
        row += [duration(r.percentile("ttft_ms", 50)), duration(r.percentile("ttft_ms", 95))]
        row += [_prefill(r)] if reported else []
        row += [
            duration(r.percentile("total_ms", 50)),
            rate(r.percentile("output_tokens_per_s", 50)),
        ]
        rows.append([*row, _runs(r)])
    header = ["variant", "prompt tok", "cached"]
    header += [f"KV {_kv_type(results)}"] if kv_known else []
    header += ["TTFT p50", "TTFT p95"]
    header += ["prefill p50"] if reported else []
    header += ["total p50", "tok/s", "runs"]
    lines = table(header, rows)
    by_label = {r.label: r for r in results}

    def change(before: str, after: str) -> str:
        first, second = by_label.get(before), by_label.get(after)
        if first is None or second is None:
            return "—"
        text = "TTFT " + _change(first.percentile("ttft_ms", 50), second.percentile("ttft_ms", 50))
        prefill = (
            first.server_percentile("prefill_ms", 50),
            second.server_percentile("prefill_ms", 50),
        )
        if prefill[0] is not None and prefill[1] is not None:
            text += "; the server's prefill " + _change(*prefill)
        return text

    lines.append("")
    lines.append("trimming, streamed:    " + change("untrimmed, streamed", "trimmed, streamed"))
    lines.append(
        "streaming, untrimmed:  " + change("untrimmed, not streamed", "untrimmed, streamed")
    )
    lines += _notes(measured)
    return lines + _errors(results)


def bench_payload(measured: Measured) -> dict[str, Any]:
    return {
        "command": "bench",
        **measured.about(),
        "cold": True,
        "variants": [_summary(r) for r in measured.results],
    }


# -- sweep ------------------------------------------------------------------------------------


def sweep_lines(measured: Measured, fit: LineFit | None) -> list[str]:
    results = measured.results
    medians = [r.percentile("ttft_ms", 50) for r in results]
    longest = max((m for m in medians if m is not None), default=0.0)
    rows = []
    for result, median in zip(results, medians, strict=True):
        bar = "█" * round(30 * median / longest) if median is not None and longest > 0 else ""
        rows.append(
            [
                result.label,
                count(result.prompt_tokens),
                _cached(result),
                duration(median),
                duration(result.percentile("ttft_ms", 95)),
                _runs(result),
                bar,
            ]
        )
    header = ["asked", "prompt tok", "cached", "TTFT p50", "TTFT p95", "runs", ""]
    lines = table(header, rows, bar=True)
    lines.append("")
    if fit is None:
        lines.append("fit: needs TTFT at two prompt lengths or more")
    else:
        speed = fit.prefill_tokens_per_s
        prefill = f"prefill {speed:,.0f} tokens/s, " if speed is not None else ""
        lines.append(
            f"fit: TTFT ≈ {fit.intercept_ms:,.0f} ms + {fit.ms_per_token:.3f} ms per prompt token"
            f" ({prefill}R² {fit.r2:.3f})"
        )
        if (warning := fit_warning(fit)) is not None:
            lines.append("warning: " + warning)
    lines += _notes(measured)
    return lines + _errors(results)


def sweep_payload(measured: Measured, fit: LineFit | None) -> dict[str, Any]:
    return {
        "command": "sweep",
        **measured.about(),
        "cold": True,
        "lengths": [_summary(r) for r in measured.results],
        "fit": None
        if fit is None
        else {
            "intercept_ms": fit.intercept_ms,
            "ms_per_prompt_token": fit.ms_per_token,
            "prefill_tokens_per_s": fit.prefill_tokens_per_s,
            "r2": fit.r2,
            "warning": fit_warning(fit),
        },
    }


# -- check ------------------------------------------------------------------------------------


def check_lines(
    verdicts: list[ClassVerdict], thresholds: Thresholds, simulated: bool = False
) -> list[str]:
    rows = []
    for verdict in verdicts:
        # One verdict: the class target is the ok/warn boundary (metrics.Thresholds).
        level = thresholds.for_target(verdict.target_ms).level(verdict.p50_ms)
        rows.append(
            [
                verdict.name,
                f"≤ {duration(verdict.target_ms)}",
                duration(verdict.p50_ms),
                duration(verdict.p95_ms),
                level.value if level is not None else "—",
                _runs(verdict.result),
                _verdict(verdict),
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
        failed = [v.name for v in verdicts if v.result.failures]
        missed = [v.name for v in verdicts if not v.met and not v.result.failures]
        if missed:
            lines.append(f"missed: {', '.join(missed)}")
        if failed:
            lines.append(f"failed: {', '.join(failed)} (a request failed: the errors are below)")
    if any(v.result.buffered for v in verdicts):
        lines.append("buffered: " + buffered_message())
    if simulated:
        lines.append(SIMULATED)
    return lines + _errors([v.result for v in verdicts])


def _verdict(verdict: ClassVerdict) -> str:
    """met, MISSED (measured over its target, or buffered), or failed (a request failed: no
    verdict on the target)."""
    if verdict.met:
        return "met"
    return "failed" if verdict.result.failures else "MISSED"


def check_payload(verdicts: list[ClassVerdict], measured: Measured) -> dict[str, Any]:
    return {
        "command": "check",
        **measured.about(),
        "met": bool(verdicts) and all(v.met for v in verdicts),
        "classes": [
            {"target_ms": v.target_ms, "met": v.met, **_summary(v.result)} for v in verdicts
        ],
    }
