"""The side panel: TTFT (large, coloured by level), timings, prompt tokens and budget, the
trimming/streaming switches, the TTFT history, model and endpoint.

It is never updated per token: the app calls `show_live` from a ~10 Hz timer with fields the
request runner sets, and every `show_*` skips widgets whose text did not change.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Digits, Static

from tui.app.live_figures import LiveFigures
from tui.app.widgets.budget_gauge import BudgetGauge
from tui.app.widgets.ttft_history import TtftHistory, format_ms
from tui.engine.metrics import RequestRecord, Thresholds

LEVEL_CLASSES = ("-ok", "-warn", "-error", "-idle")
MIN_TOKENS_FOR_RATE = 10  # tokens/s and TPOT from fewer chunks are noise


def _digits_value(ms: float) -> tuple[str, str]:
    """Digits text and unit: 842 ms; 1.24 s; 12.3 s."""
    if ms < 1000:
        return f"{ms:.0f}", "ms"
    if ms < 10_000:
        return f"{ms / 1000:.2f}", "s"
    return f"{ms / 1000:.1f}", "s"


def _rows(rows: list[tuple[str, str]]) -> Text:
    text = Text()
    for i, (label, value) in enumerate(rows):
        if i:
            text.append("\n")
        text.append(f"{label:<10}", style="dim")
        text.append(value)
    return text


class LatencyPanel(VerticalScroll):
    def __init__(self, thresholds: Thresholds, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.thresholds = thresholds
        self._shown: dict[str, object] = {}
        self._shapes: dict[str, tuple[int, bool]] = {}

    def compose(self) -> ComposeResult:
        yield Static("TTFT", id="ttft-label", classes="section")
        with Horizontal(id="ttft-row"):
            yield Digits("--", id="ttft", classes="-idle")
            yield Static("", id="ttft-unit")
        yield Static("", id="ttft-note")
        yield Static("", id="timings")
        yield Static("prompt", classes="section")
        yield Static("", id="prompt-tokens")
        yield BudgetGauge(id="budget")
        yield Static("", id="trim-note")
        yield Static("switches", classes="section")
        yield Static("", id="switches")
        yield Static("TTFT this chat", classes="section")
        yield TtftHistory(id="history")
        yield Static("endpoint", classes="section")
        yield Static("", id="endpoint")

    def _set(self, widget_id: str, content: Text | str) -> None:
        """Update a Static only when its content changed (keeps 10 Hz ticks nearly free)."""
        key = str(content) if isinstance(content, str) else content.markup
        if self._shown.get(widget_id) == key:
            return
        self._shown[widget_id] = key
        widget = self.query_one(f"#{widget_id}", Static)
        # A layout pass reflows the whole screen (~10 ms here): only ask for one when the
        # text's shape changed (line count, or a line too long for the panel).
        plain = content if isinstance(content, str) else content.plain
        lines = plain.split("\n")
        shape = (len(lines), max(map(len, lines)) > widget.content_region.width)
        layout = self._shapes.get(widget_id) != shape
        self._shapes[widget_id] = shape
        widget.update(content, layout=layout)

    def _set_ttft(self, ms: float | None, level_class: str, label: str) -> None:
        digits = self.query_one("#ttft", Digits)
        value, unit = ("--", "") if ms is None else _digits_value(ms)
        if self._shown.get("ttft") != (value, level_class):
            self._shown["ttft"] = (value, level_class)
            digits.update(value)
            digits.remove_class(*LEVEL_CLASSES)
            digits.add_class(level_class)
            unit_widget = self.query_one("#ttft-unit", Static)
            unit_widget.remove_class(*LEVEL_CLASSES)
            unit_widget.add_class(level_class)
        self._set("ttft-unit", unit)
        self._set("ttft-label", Text.assemble(("TTFT  ", "bold"), (label, "dim")))

    def _level_class(self, ms: float | None) -> str:
        level = self.thresholds.level(ms)
        return f"-{level.value}" if level else "-idle"

    def show_live(self, live: LiveFigures) -> None:
        if live.ttft_ms is None:
            self._set_ttft(live.elapsed_ms, self._level_class(live.elapsed_ms), "waiting…")
        else:
            self._set_ttft(live.ttft_ms, self._level_class(live.ttft_ms), "streaming")
        rate = tpot = "—"
        if live.tokens >= MIN_TOKENS_FOR_RATE and live.decode_s > 0 and live.ttft_ms:
            rate = f"{(live.tokens - 1) / live.decode_s:.0f} tok/s"
            tpot = f"{live.decode_s * 1000 / (live.tokens - 1):.1f} ms"
        self._set("ttft-note", Text("", style="dim"))
        self._set(
            "timings",
            _rows(
                [
                    ("TTFB", format_ms(live.ttfb_ms)),
                    ("total", format_ms(live.elapsed_ms) + " …"),
                    ("TPOT", tpot),
                    ("output", rate),
                    ("tokens", f"{live.tokens:,}"),
                    ("retries", str(live.retries)),
                ]
            ),
        )

    def show_record(self, record: RequestRecord) -> None:
        label = "non-streamed = total" if not record.streamed else record.status.value
        if record.status.value == "ok":
            label = "" if record.streamed else "non-streamed = total"
        self._set_ttft(record.ttft_ms, self._level_class(record.ttft_ms), label)
        note = Text()
        if record.request_class:
            # One line in the panel's width: "short_qa ≤ 500 ms ✓ met".
            target = format_ms(record.ttft_target_ms)
            note.append(f"{record.request_class} ≤ {target} ", style="dim")
            if record.target_met is True:
                note.append("✓ met", style=f"bold {self.app.current_theme.success}")
            elif record.target_met is False:
                note.append("✗ missed", style=f"bold {self.app.current_theme.error}")
        self._set("ttft-note", note)
        rate = f"{record.output_tokens_per_s:.0f} tok/s" if record.output_tokens_per_s else "—"
        tpot = f"{record.tpot_ms:.1f} ms" if record.tpot_ms is not None else "—"
        tokens = "—" if record.output_tokens is None else f"{record.output_tokens:,}"
        self._set(
            "timings",
            _rows(
                [
                    ("TTFB", format_ms(record.ttfb_ms)),
                    ("total", format_ms(record.total_ms)),
                    ("TPOT", tpot),
                    ("output", rate),
                    ("tokens", tokens),
                    ("retries", str(record.retries)),
                ]
            ),
        )

    def show_idle(self) -> None:
        self._set_ttft(None, "-idle", "")
        self._set("ttft-note", Text("send a message to measure", style="dim"))
        rows = [("TTFB", "—"), ("total", "—"), ("TPOT", "—"), ("output", "—")]
        self._set("timings", _rows([*rows, ("tokens", "—"), ("retries", "—")]))

    def show_prompt(
        self,
        tokens: int | None,
        exact: bool,
        *,
        actual: int | None = None,
        dropped_messages: int = 0,
        dropped_tokens: int = 0,
        trimming: bool = True,
    ) -> None:
        text = Text()
        if tokens is None:
            text.append("counting tokens…", style="dim")
        else:
            text.append(("" if exact else "≈") + f"{tokens:,}", style="bold")
            text.append(" tokens next request", style="dim")
        if actual is not None:
            text.append("\n")
            text.append(f"{actual:,}", style="bold")
            text.append(" sent last time (usage)", style="dim")
        self._set("prompt-tokens", text)
        note = Text()
        if dropped_messages:
            warn = self.app.current_theme.warning or "yellow"
            note.append(f"✂ {dropped_messages} message{'s' * (dropped_messages != 1)}", style=warn)
            note.append(f", {dropped_tokens:,} tokens dropped", style=warn)
        elif trimming:
            note.append("nothing to drop", style="dim")
        else:
            note.append("trimming off: sent whole", style="dim")
        self._set("trim-note", note)

    def show_switches(
        self, *, trimming: bool, streaming: bool, strategy: str, budget: int, reserve: int
    ) -> None:
        theme = self.app.current_theme

        def switch(on: bool) -> tuple[str, str]:
            return ("● on " if on else "○ off", f"bold {theme.success}" if on else "dim")

        text = Text()
        text.append(f"{'trimming':<10}", style="dim")
        text.append(*switch(trimming))
        text.append("  ctrl+t\n", style="dim")
        text.append(f"{'streaming':<10}", style="dim")
        text.append(*switch(streaming))
        text.append("  f3\n", style="dim")
        text.append(f"{'strategy':<10}", style="dim")
        text.append(f"{strategy}\n")
        text.append(f"{'budget':<10}", style="dim")
        text.append(f"{budget:,}")
        text.append(f" + {reserve:,} out", style="dim")
        self._set("switches", text)

    def show_endpoint(self, model: str, host: str, simulated: bool) -> None:
        text = Text()
        text.append(f"{'model':<10}", style="dim")
        text.append(f"{model}\n", style="bold")
        text.append(f"{'host':<10}", style="dim")
        text.append(host)
        if simulated:
            text.append("\n")
            text.append(
                f"{'':<10}simulated (demo)", style=f"italic {self.app.current_theme.accent}"
            )
        self._set("endpoint", text)
