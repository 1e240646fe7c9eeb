"""A race lane's figures above its replies: the target, its live TTFT counter (coloured by its
class's target as the side panel's), tokens per second, and where its TTFT went.

The same three calls as the side panel's (the reply view drives both): `show_live` from the
~10 Hz tick, `show_record` when a reply ends, `add_sample` for its TTFT this chat. Each call
updates a line only when its text changed.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tui.app.panel.live_figures import LiveFigures
from tui.app.panel.ttft_history import TtftSample, format_ms
from tui.app.panel.ttft_waterfall import TtftWaterfall, WaterfallFigures
from tui.engine.metrics.anatomy import ttft_anatomy
from tui.engine.metrics.record import RequestRecord, Thresholds
from tui.engine.metrics.request_classes import ClassChoice

LEVELS = ("-ok", "-warn", "-error", "-idle")
MIN_TOKENS_FOR_RATE = 3


class LanePanel(Vertical):
    DEFAULT_CSS = """
    LanePanel {
        height: auto;
        padding: 0 1;
        border-bottom: solid $panel-lighten-1;
    }
    LanePanel > .lane-title { text-style: bold; height: 1; }
    LanePanel > .lane-where { color: $text-muted; height: 1; }
    LanePanel > .lane-ttft { height: 1; }
    LanePanel > .lane-ttft.-ok { color: $success; }
    LanePanel > .lane-ttft.-warn { color: $warning; }
    LanePanel > .lane-ttft.-error { color: $error; }
    LanePanel > .lane-ttft.-idle { color: $text-muted; }
    LanePanel > .lane-rate { height: 1; color: $text-muted; }
    """

    def __init__(self, title: str, where: str, thresholds: Thresholds, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.title_line = Static(title, markup=False, classes="lane-title")
        self.where_line = Static(where, markup=False, classes="lane-where")
        self.ttft_line = Static("TTFT —", markup=False, classes="lane-ttft -idle")
        self.rate_line = Static("", markup=False, classes="lane-rate")
        self.waterfall = TtftWaterfall()
        self.thresholds = thresholds
        self.samples: list[TtftSample] = []
        self._shown: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield self.title_line
        yield self.where_line
        yield self.ttft_line
        yield self.rate_line
        yield self.waterfall

    def _set(self, widget: Static, key: str, text: str | Text) -> None:
        plain = text.plain if isinstance(text, Text) else text
        if self._shown.get(key) != plain:
            self._shown[key] = plain
            widget.update(text)

    def _level(self, ms: float | None, target_ms: float | None) -> None:
        level = self.thresholds.for_target(target_ms).level(ms)
        wanted = f"-{level.value}" if level else "-idle"
        if not self.ttft_line.has_class(wanted):
            self.ttft_line.remove_class(*LEVELS)
            self.ttft_line.add_class(wanted)

    def show_live(self, live: LiveFigures, expected: ClassChoice | None = None) -> None:
        target = expected.request_class.ttft_target_ms if expected is not None else None
        if live.ttft_ms is None:
            self._level(live.elapsed_ms, target)
            self._set(self.ttft_line, "ttft", f"TTFT {format_ms(live.elapsed_ms)} · waiting…")
            self.waterfall.show_pending("waiting for the first token")
            self._set(self.rate_line, "rate", "")
            return
        self._level(live.ttft_ms, target)
        self._set(self.ttft_line, "ttft", f"TTFT {format_ms(live.ttft_ms)} · streaming")
        rate = ""
        if live.tokens >= MIN_TOKENS_FOR_RATE and live.decode_s > 0:
            rate = f"{(live.tokens - 1) / live.decode_s:.0f} tok/s · {live.tokens:,} tok"
        self._set(self.rate_line, "rate", rate)
        self.waterfall.show_pending("the parts follow the reply")

    def show_record(self, record: RequestRecord) -> None:
        self._level(record.ttft_ms, record.ttft_target_ms)
        label = "TTFT" if record.streamed else "TTFT=total"
        status = "" if record.status.value == "ok" else f" · {record.status.value}"
        self._set(self.ttft_line, "ttft", f"{label} {format_ms(record.ttft_ms)}{status}")
        parts = []
        if record.output_tokens_per_s:
            parts.append(f"{record.output_tokens_per_s:.0f} tok/s")
        if record.tpot_ms is not None:
            parts.append(f"TPOT {record.tpot_ms:.1f} ms")
        if record.total_ms is not None:
            parts.append(f"total {format_ms(record.total_ms)}")
        self._set(self.rate_line, "rate", " · ".join(parts))
        anatomy = ttft_anatomy(record)
        if anatomy is None:
            self.waterfall.show_pending("no first token: nothing to take apart")
        else:
            self.waterfall.show(WaterfallFigures(anatomy, record.connection_reused))

    def add_sample(self, sample: TtftSample) -> None:
        self.samples.append(sample)
