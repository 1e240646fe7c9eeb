"""The server's progress through the prompt, for the panel while the first token is awaited:
a bar, the processed and cached tokens, the server's prefill rate and when the first token
should come (llama.cpp's prompt_progress; tui/engine/metrics/prefill.py)."""

from __future__ import annotations

from rich.text import Text

from tui.engine.metrics.prefill import PrefillSample

BAR_CELLS = 14


def prefill_lines(sample: PrefillSample, rate: float | None, eta_s: float | None) -> Text:
    """Three lines: "prefill ██████░░░░░░ 38%", "2,048 of 5,400 tok · 512 cached",
    "833 tok/s · first token ~4.0 s" (the last only with a rate)."""
    filled = round(sample.fraction * BAR_CELLS)
    cached = round(min(sample.cached / sample.total, 1.0) * BAR_CELLS) if sample.total else 0
    cached = min(cached, filled)
    text = Text()
    text.append("prefill ", style="dim")
    text.append("█" * cached, style="dim")
    text.append("█" * (filled - cached))
    text.append("░" * (BAR_CELLS - filled), style="dim")
    text.append(f" {sample.fraction:.0%}")
    counts = f"{sample.processed:,} of {sample.total:,} tok"
    if sample.cached:
        counts += f" · {sample.cached:,} cached"
    text.append("\n" + counts)
    if rate is not None:
        line = f"{rate:,.0f} tok/s"
        if eta_s is not None:
            line += f" · first token ~{eta_s:.1f} s"
        text.append("\n" + line)
    return text
