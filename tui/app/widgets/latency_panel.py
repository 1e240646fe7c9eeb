"""The side panel: TTFT (large, coloured by level), timings, prompt tokens and budget, the
trimming/streaming switches, the TTFT history, model and endpoint.

It is never updated per token: the app calls `show_live` from a ~10 Hz timer with fields the
request runner sets, and every `show_*` skips widgets whose text did not change.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widget import Widget
from textual.widgets import Digits, Static

from tui.app.live_figures import LiveFigures
from tui.app.render import StoreSizeWithoutRelayout
from tui.app.widgets.budget_gauge import BudgetFigures, BudgetGauge
from tui.app.widgets.ttft_history import TtftHistory, TtftSample, format_ms
from tui.engine.metrics import RequestRecord, Thresholds

LEVEL_CLASSES = ("-ok", "-warn", "-error", "-idle")
Method = TypeVar("Method", bound=Callable[..., None])


def _once_filled(method: Method) -> Method:
    """Run now if the panel's widgets exist, else right after `fill()` (in call order)."""

    @functools.wraps(method)
    def run_or_defer(self: LatencyPanel, *args: Any, **kwargs: Any) -> None:
        if self.filled:
            method(self, *args, **kwargs)
        else:
            self._deferred.append(functools.partial(method, self, *args, **kwargs))

    return run_or_defer  # type: ignore[return-value]


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


class PanelText(StoreSizeWithoutRelayout, Static):
    """A line or block of the panel's text. When a layout pass resizes it (the TTFT's unit
    appears, the timings gain rows), Textual asks for a second whole-screen layout to store
    the new size, which finds nothing new: one more layout and frame, ~20 ms after the write
    that brought the first live figures (traced, benchmarks/render). It stores the size
    without asking (see single_layout); it scrolls nothing, so nothing else needs it."""


class PanelDigits(StoreSizeWithoutRelayout, Digits):
    """The large TTFT, which changes width with its value: as PanelText."""


def set_level_class(widget: Widget, level_class: str) -> None:
    """Give `widget` this one of LEVEL_CLASSES. Each class change restyles the widget (the
    stylesheet is matched again): none when the level is unchanged, one when it changes
    (removing the old class and adding the new one restyled it twice)."""
    if not widget.has_class(level_class):
        widget.remove_class(*LEVEL_CLASSES, update=False)
        widget.add_class(level_class)


class LatencyPanel(VerticalScroll):
    def __init__(self, thresholds: Thresholds, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.thresholds = thresholds
        self._shown: dict[str, object] = {}
        self._shapes: dict[str, tuple[int, bool]] = {}
        self.filled = False
        self._deferred: list[Callable[[], None]] = []

    def compose(self) -> ComposeResult:
        # Empty at first: its ~20 widgets cost ~50 ms of the first frame (measured headless,
        # 216 vs 161 ms to the first frame), and the prompt is what a user needs first. The
        # app calls `fill()` right after the first frame; calls made before wait for it.
        return iter(())

    async def fill(self) -> None:
        if self.filled:
            return
        await self.mount_all(self._widgets())
        self.filled = True
        deferred, self._deferred = self._deferred, []
        for call in deferred:
            call()

    def _widgets(self) -> list[Widget]:
        return [
            PanelText("TTFT", id="ttft-label", classes="section"),
            Horizontal(
                PanelDigits("--", id="ttft", classes="-idle"),
                PanelText("", id="ttft-unit"),
                id="ttft-row",
            ),
            PanelText("", id="ttft-note"),
            PanelText("", id="timings"),
            PanelText("prompt", classes="section"),
            PanelText("", id="prompt-tokens"),
            BudgetGauge(id="budget"),
            PanelText("", id="trim-note"),
            PanelText("switches", classes="section"),
            PanelText("", id="switches"),
            PanelText("TTFT this chat", classes="section"),
            TtftHistory(id="history"),
            PanelText("endpoint", classes="section"),
            PanelText("", id="endpoint"),
        ]

    @_once_filled
    def show_budget(self, figures: BudgetFigures | None) -> None:
        self.query_one(BudgetGauge).show(figures)

    @_once_filled
    def add_sample(self, sample: TtftSample) -> None:
        self.query_one(TtftHistory).add(sample)

    @_once_filled
    def clear_history(self) -> None:
        self.query_one(TtftHistory).clear()

    @_once_filled
    def restyle(self) -> None:
        """The theme changed: Rich styles captured the old colours, render everything again."""
        self._shown.clear()
        self.query_one(BudgetGauge).figures = None

    @_once_filled
    def refresh_history(self) -> None:
        self.query_one(TtftHistory).refresh_view()

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
            for widget in (digits, self.query_one("#ttft-unit", Static)):
                set_level_class(widget, level_class)
        self._set("ttft-unit", unit)
        self._set("ttft-label", Text.assemble(("TTFT  ", "bold"), (label, "dim")))

    def _level_class(self, ms: float | None) -> str:
        level = self.thresholds.level(ms)
        return f"-{level.value}" if level else "-idle"

    @_once_filled
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

    @_once_filled
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

    @_once_filled
    def show_idle(self) -> None:
        self._set_ttft(None, "-idle", "")
        self._set("ttft-note", Text("send a message to measure", style="dim"))
        rows = [("TTFB", "—"), ("total", "—"), ("TPOT", "—"), ("output", "—")]
        self._set("timings", _rows([*rows, ("tokens", "—"), ("retries", "—")]))

    @_once_filled
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
        # The second line is there before the first reply too ("—"), so the panel does not
        # shift down when it fills in (a shift repaints every section below it).
        text.append("\n")
        text.append("—" if actual is None else f"{actual:,}", style="bold")
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

    @_once_filled
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

    @_once_filled
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
