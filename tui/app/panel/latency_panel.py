"""The side panel: TTFT (large, coloured by its one verdict), where it went (the waterfall),
timings, prompt tokens and budget, the trimming/streaming switches, the TTFT history, model and
endpoint.

It is never updated per token: the app calls `show_live` from a ~10 Hz timer with fields the
request runner sets, and every `show_*` skips widgets whose text did not change. The endpoint
section is docked at the panel's foot, so a long chat's figures never push "simulated" off
the screen; the sections above it keep a fixed number of lines where they can, so a new reply
moves nothing below them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Digits, Static

from tui.app.panel.budget_gauge import BudgetFigures, BudgetGauge
from tui.app.panel.figure_meanings import tooltip
from tui.app.panel.live_figures import LiveFigures
from tui.app.panel.prefill_bar import prefill_lines
from tui.app.panel.ttft_history import TtftHistory, TtftSample, cached_tokens_of, format_ms
from tui.app.panel.ttft_waterfall import TtftWaterfall, WaterfallFigures
from tui.app.render import StoreSizeWithoutRelayout
from tui.app.theme_colors import theme_colour
from tui.engine.metrics.anatomy import ttft_anatomy
from tui.engine.metrics.kv_cache import kv_phrase
from tui.engine.metrics.record import RequestRecord, Thresholds
from tui.engine.metrics.request_classes import ClassChoice

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


Row = tuple[str, str, str, str]  # label, value, second label, second value


def _rows(rows: list[Row], extra: Text | None = None) -> Text:
    """Two figures a line ("TTFB  8 ms       total  1.89 s"), then `extra`'s lines."""
    text = Text()
    for i, (label, value, label_2, value_2) in enumerate(rows):
        if i:
            text.append("\n")
        text.append(f"{label:<7}", style="dim")
        text.append(f"{value:<10}")
        text.append(f"{label_2:<7}" if label_2 else "", style="dim")
        text.append(value_2)
    if extra is not None and extra.plain:
        text.append("\n")
        text.append_text(extra)
    return text


def _lines(*lines: Text | None) -> Text:
    return Text("\n").join(line for line in lines if line is not None and line.plain)


SWITCHES_HINT = (
    "trimming and streaming for the next request (ctrl+t, f3); trimming drops messages by the "
    "strategy until the prompt fits the budget (ctrl+up / ctrl+down change it)"
)
ENDPOINT_HINT = (
    "the model and the endpoint's host; simulated: the figures come from the embedded demo "
    "endpoint's latency model, not from a real server"
)
KV_HINT = (
    "the KV cache the last prompt filled on the server (2 × layers × KV heads × head dim × "
    "tokens × bytes, at the cache's type), and the whole context window's: docs/metrics.md"
)
WAITING_NOTE = "waiting for the first token…"
STREAMING_NOTE = "its parts: when the reply ends"
BUFFERED_NOTE = "⚠ buffered: a proxy held the stream, TTFT is the whole reply"
BUFFERED_FIX = "fix: nginx proxy_buffering off, X-Accel-Buffering: no, or base_url past the proxy"


class PanelText(StoreSizeWithoutRelayout, Static):
    """A line or block of the panel's text. When a layout pass resizes it (the TTFT's unit
    appears, the timings gain rows), Textual asks for a second whole-screen layout to store
    the new size, which finds nothing new: one more layout and frame just after the write
    that brings the first live figures. It stores the size without asking (see
    single_layout); it scrolls nothing, so nothing else needs it."""


class PanelDigits(StoreSizeWithoutRelayout, Digits):
    """The large TTFT, which changes width with its value: as PanelText."""


def set_level_class(widget: Widget, level_class: str) -> None:
    """Give `widget` this one of LEVEL_CLASSES. Each class change restyles the widget (the
    stylesheet is matched again): none when the level is unchanged, one when it changes
    (removing the old class and then adding the new one would restyle it twice)."""
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
        # Empty at first: its widgets would add to the first frame's cost, and the prompt is
        # what a user needs first. The app calls `fill()` right after the first frame; calls
        # made before wait for it.
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
        def text(content: str = "", **kwargs: Any) -> PanelText:
            hint = kwargs.pop("tooltip", None)
            widget = PanelText(content, **kwargs)
            widget.tooltip = hint
            return widget

        history_hint = (
            "this chat's TTFTs, one bar per reply coloured by its verdict, then the last two: "
            "TTFT, trimming on/off, prompt tokens, and whether the server's prefix cache "
            "served part of the prompt (warm, with the share cached) or not (cold)"
        )
        waterfall = TtftWaterfall(id="waterfall")
        waterfall.tooltip = tooltip("waterfall")
        budget = BudgetGauge(id="budget")
        budget.tooltip = tooltip("prompt")
        history = TtftHistory(self.thresholds, id="history")
        history.tooltip = history_hint
        kv_cache = text(id="kv-cache", tooltip=KV_HINT)
        kv_cache.display = False  # until a reply from a model whose shape is known
        return [
            text("TTFT", id="ttft-label", tooltip=tooltip("TTFT")),
            Horizontal(
                PanelDigits("--", id="ttft", classes="-idle"),
                PanelText("", id="ttft-unit"),
                id="ttft-row",
            ),
            text(id="ttft-note", tooltip=tooltip("target")),
            waterfall,
            text(
                id="timings",
                tooltip=tooltip(
                    "TTFB", "total", "TPOT", "tok/s", "cached", "answer", "pause", "buffered"
                ),
            ),
            text("prompt", classes="section", tooltip=tooltip("prompt")),
            text(id="prompt-tokens", tooltip=tooltip("prompt")),
            budget,
            text(id="trim-note"),
            kv_cache,
            text("switches", id="switches-title", classes="section", tooltip=SWITCHES_HINT),
            text(id="switches"),
            text("TTFT this chat", classes="section", tooltip=history_hint),
            history,
            Vertical(
                text("endpoint", classes="section", tooltip=ENDPOINT_HINT),
                text(id="endpoint", tooltip=ENDPOINT_HINT),
                id="endpoint-section",
            ),
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
        self.query_one(TtftWaterfall).redraw()

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
        # A layout pass reflows the whole screen: only ask for one when the text's shape
        # changed (line count, or a line too long for the panel).
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

    def _level_class(self, ms: float | None, target_ms: float | None = None) -> str:
        """The one verdict's colour: the class target is the ok/warn boundary."""
        level = self.thresholds.for_target(target_ms).level(ms)
        return f"-{level.value}" if level else "-idle"

    def _verdict(self, name: str | None, target_ms: float | None, met: bool | None) -> Text:
        """ "short_qa ≤ 500 ms ✓ met": the class, its target and (once known) the verdict."""
        note = Text()
        if name is None:
            return note
        note.append(f"{name} ≤ {format_ms(target_ms)} ", style="dim")
        if met is True:
            note.append("✓ met", style=f"bold {theme_colour(self.app, 'success', 'green')}")
        elif met is False:
            note.append("✗ missed", style=f"bold {theme_colour(self.app, 'error', 'red')}")
        return note

    @_once_filled
    def show_live(self, live: LiveFigures, expected: ClassChoice | None = None) -> None:
        target = expected.request_class.ttft_target_ms if expected is not None else None
        name = expected.request_class.name if expected is not None else None
        if live.ttft_ms is None:
            shown_ms = live.elapsed_ms
            # Over its target while still waiting: missed already, said at once.
            met = False if target is not None and shown_ms > target else None
            self._set_ttft(shown_ms, self._level_class(shown_ms, target), "waiting…")
        else:
            shown_ms = live.ttft_ms
            met = None if target is None else shown_ms <= target
            label = "thinking…" if live.thinking else "streaming"
            if live.answer_ms is not None:  # after reasoning: the answer's wait, beside TTFT
                label = f"answer {format_ms(live.answer_ms)}"
            self._set_ttft(shown_ms, self._level_class(shown_ms, target), label)
        self._set("ttft-note", self._verdict(name, target, met))
        waterfall = self.query_one(TtftWaterfall)
        waterfall.show_pending(WAITING_NOTE if live.ttft_ms is None else STREAMING_NOTE)
        rate = tpot = "—"
        tpot_ms, per_s = live.rates()
        if live.tokens >= MIN_TOKENS_FOR_RATE and tpot_ms is not None and per_s is not None:
            rate = f"{per_s:.0f} tok/s"
            tpot = f"{tpot_ms:.1f} ms"
        pause = None
        if live.paused_ms is not None:
            warning = theme_colour(self.app, "warning", "yellow")
            pause = Text(f"‖ no token for {live.paused_ms / 1000:.1f} s…", style=f"bold {warning}")
        rows: list[Row] = [
            ("TTFB", format_ms(live.ttfb_ms), "total", format_ms(live.elapsed_ms) + " …"),
            ("TPOT", tpot, "", rate),
            ("tokens", f"{live.tokens:,}", "retry", str(live.retries)),
        ]
        prefill = None
        if live.prefill is not None and live.ttft_ms is None:
            prefill = prefill_lines(live.prefill, live.prefill_rate, live.prefill_eta_s)
        self._set("timings", _rows(rows, _lines(prefill, pause)))

    @_once_filled
    def show_record(self, record: RequestRecord) -> None:
        label = "non-streamed = total" if not record.streamed else record.status.value
        if record.status.value == "ok":
            label = "" if record.streamed else "non-streamed = total"
        answer = record.time_to_first_answer_ms
        if answer is not None and record.ttft_ms is not None and answer > record.ttft_ms:
            # A reasoning model: the wait for its answer, beside TTFT.
            label = " · ".join(part for part in (label, f"answer {format_ms(answer)}") if part)
        target = record.ttft_target_ms
        self._set_ttft(record.ttft_ms, self._level_class(record.ttft_ms, target), label)
        self._set("ttft-note", self._verdict(record.request_class, target, record.target_met))
        anatomy = ttft_anatomy(record)
        waterfall = self.query_one(TtftWaterfall)
        if anatomy is None:
            waterfall.show_pending("no first token: nothing to take apart")
        else:
            waterfall.show(WaterfallFigures(anatomy, record.connection_reused))
        rate = f"{record.output_tokens_per_s:.0f} tok/s" if record.output_tokens_per_s else "—"
        tpot = f"{record.tpot_ms:.1f} ms" if record.tpot_ms is not None else "—"
        tokens = "—" if record.output_tokens is None else f"{record.output_tokens:,}"
        gap = format_ms(record.longest_gap_ms) if record.longest_gap_ms is not None else "—"
        rows: list[Row] = [
            ("TTFB", format_ms(record.ttfb_ms), "total", format_ms(record.total_ms)),
            ("TPOT", tpot, "", rate),
            ("tokens", tokens, "gap", gap),
        ]
        self._set("timings", _rows(rows, self._record_notes(record)))
        self._show_kv(record.kv_cache)

    def _show_kv(self, kv: dict[str, Any] | None) -> None:
        """The last prompt's KV cache beside the budget, and the whole context's (a model whose
        shape is known only)."""
        phrase = kv_phrase(kv) if kv is not None else None
        widget = self.query_one("#kv-cache", Static)
        widget.display = phrase is not None
        if phrase is not None:
            self._set("kv-cache", Text.assemble(("KV ", "dim"), phrase.removeprefix("KV ")))

    def _record_notes(self, record: RequestRecord) -> Text:
        """The lines only some replies have: speculative decoding's acceptance, the server's
        prefill rate, cached and reasoning tokens, pauses, retries, buffering."""
        warning = theme_colour(self.app, "warning", "yellow")
        lines: list[Text | None] = []
        if record.draft_acceptance is not None:  # speculative decoding: what TPOT rests on
            lines.append(
                Text.assemble(("draft ", "dim"), f"{record.draft_acceptance:.0%} accepted")
            )
        if record.prefill_tokens_per_s is not None:
            lines.append(
                Text.assemble(("prefill ", "dim"), f"{record.prefill_tokens_per_s:,.0f} tok/s")
            )
        cached = cached_tokens_of(record)
        if cached is not None:
            server = record.server or {}
            of = server.get("prompt_tokens") or record.prompt_tokens_usage
            whole = f" of {of:,}" if isinstance(of, int) else ""
            lines.append(Text.assemble(("cached ", "dim"), f"{cached:,}{whole}"))
        if record.reasoning_tokens:
            lines.append(Text.assemble(("thinking ", "dim"), f"{record.reasoning_tokens:,} tok"))
        if record.pauses:
            pauses = f"‖ {record.pauses} pause{'s' * (record.pauses != 1)}, the reply went on"
            lines.append(Text(pauses, style=warning))
        if record.retries:
            lines.append(Text.assemble(("retries ", "dim"), str(record.retries)))
        if record.buffered:
            lines.append(Text(BUFFERED_NOTE, style=f"bold {warning}"))
            lines.append(Text(BUFFERED_FIX, style="dim"))
        return _lines(*lines)

    @_once_filled
    def show_idle(self) -> None:
        self._set_ttft(None, "-idle", "")
        self._set("ttft-note", Text("send a message to measure", style="dim"))
        self.query_one(TtftWaterfall).show(None)
        rows: list[Row] = [("TTFB", "—", "total", "—"), ("TPOT", "—", "", "—")]
        self._set("timings", _rows([*rows, ("tokens", "—", "gap", "—")]))

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
        actual_source: str = "usage",
        actual_exact: bool = True,
    ) -> None:
        # The next request's count is the gauge's; this line is the last request's prompt, as
        # counted best (sent_prompt.py). It is there before the first reply too ("—"), so
        # nothing shifts.
        text = Text()
        text.append("last sent ", style="dim")
        approx = "" if actual_exact else "≈"
        text.append("—" if actual is None else f"{approx}{actual:,}", style="bold")
        if actual is not None:
            text.append(f" tokens ({actual_source})", style="dim")
        self._set("prompt-tokens", text)
        note = Text()
        if dropped_messages:
            warn = theme_colour(self.app, "warning", "yellow")
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
        success = theme_colour(self.app, "success", "green")

        def switch(on: bool) -> tuple[str, str]:
            return ("● on " if on else "○ off", f"bold {success}" if on else "dim")

        # The strategy beside the title, the budget in the gauge: the switches take one line.
        title = Text.assemble(("switches", "bold"), (f"  trimming by {strategy}", "dim"))
        self._set("switches-title", title)
        text = Text()
        text.append("trim ", style="dim")
        text.append(*switch(trimming))
        text.append(" ^t  ", style="dim")
        text.append("stream ", style="dim")
        text.append(*switch(streaming))
        text.append(" f3", style="dim")
        self._set("switches", text)

    @_once_filled
    def show_endpoint(self, model: str, host: str, simulated: bool) -> None:
        accent = f"italic {theme_colour(self.app, 'accent', 'magenta')}"
        text = Text()
        text.append("model ", style="dim")
        text.append(f"{model}\n", style="bold")
        text.append("host  ", style="dim")
        text.append(host)
        if simulated:
            text.append(" simulated", style=accent)
        self._set("endpoint", text)
