"""This chat's TTFTs: a sparkline, one bar per reply coloured by its own verdict, then the last
two side by side (the trimming off vs on demo: send once each way and compare), each saying
whether the server's prefix cache served part of its prompt (warm) or not (cold).

When the last two differ in trimming, a fourth line gives the change in TTFT and whether the
two are alike in cache: a server that reuses the previous prompt's prefix (llama.cpp, vLLM,
OpenAI, the demo's `prefix_cache`) serves the second send's shared opening from its cache, so
off-then-on and on-then-off give different gains unless both were cold.

Always four lines, so a new reply never moves the sections below.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from tui.app.theme_colors import theme_colour
from tui.engine.metrics.record import RequestRecord, RequestStatus, Thresholds, TtftLevel

HISTORY_LENGTH = 30
BARS = "▁▂▃▄▅▆▇█"
# Under this share of the prompt served from the cache a request is cold: a cold request to a
# llama.cpp server still reuses the chat template's first few tokens.
WARM_SHARE = 0.05


@dataclass(frozen=True)
class TtftSample:
    ttft_ms: float
    trimmed: bool
    streamed: bool
    prompt_tokens: int | None
    ttft_target_ms: float | None = None
    cached_tokens: int | None = None  # None: the server did not say

    @classmethod
    def of(cls, record: RequestRecord) -> TtftSample | None:
        """A record's place in the history; None when it has no TTFT to show (it failed)."""
        if record.ttft_ms is None or record.status == RequestStatus.ERROR:
            return None
        prompt_tokens = record.prompt_tokens_usage or record.tokens_after
        return cls(
            record.ttft_ms,
            record.trim_enabled,
            record.streamed,
            prompt_tokens,
            record.ttft_target_ms,
            cached_tokens_of(record),
        )

    @property
    def cache_label(self) -> str:
        """ "cold", "warm 33%", or "" when the server did not report its cache."""
        if self.cached_tokens is None or not self.prompt_tokens:
            return ""
        share = self.cached_tokens / self.prompt_tokens
        return "cold" if share < WARM_SHARE else f"warm {share:.0%}"


def cached_tokens_of(record: RequestRecord) -> int | None:
    server = record.server or {}
    cached = server.get("cached_tokens")
    return cached if isinstance(cached, int) and not isinstance(cached, bool) else None


def format_ms(ms: float | None) -> str:
    if ms is None:
        return "—"
    if ms >= 10_000:
        return f"{ms / 1000:.1f} s"
    if ms >= 1_000:
        return f"{ms / 1000:.2f} s"
    return f"{ms:.0f} ms"


def _tokens(n: int | None) -> str:
    if not n:
        return "—"
    return f"{n:,}" if n < 100_000 else f"{n // 1000}k"


class TtftHistory(Static):
    DEFAULT_CSS = "TtftHistory { height: 4; }"

    def __init__(self, thresholds: Thresholds | None = None, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.thresholds = thresholds or Thresholds()
        self.samples: list[TtftSample] = []

    def on_mount(self) -> None:
        self.refresh_view()

    def add(self, sample: TtftSample) -> None:
        self.samples.append(sample)
        del self.samples[:-HISTORY_LENGTH]
        self.refresh_view()

    def clear(self) -> None:
        self.samples.clear()
        self.refresh_view()

    def on_resize(self) -> None:
        self.refresh_view()

    def refresh_view(self) -> None:
        if self.is_mounted:
            self.update(self.render_history(self.content_size.width or 34))

    def _style(self, sample: TtftSample) -> str:
        level = self.thresholds.for_target(sample.ttft_target_ms).level(sample.ttft_ms)
        if level == TtftLevel.OK:
            return theme_colour(self.app, "success", "green")
        if level == TtftLevel.WARN:
            return theme_colour(self.app, "warning", "yellow")
        return theme_colour(self.app, "error", "red")

    def render_history(self, width: int) -> Text:
        if not self.samples:
            return Text("no requests yet", style="dim")
        return Text("\n").join([self.sparkline(width), self.comparison()])

    def sparkline(self, width: int) -> Text:
        """One cell per reply, newest right, heights from zero to this chat's slowest, so one
        value is one full bar and two values are two bars in proportion."""
        scale = f"  max {format_ms(max(s.ttft_ms for s in self.samples))}"
        shown = self.samples[-max(1, width - len(scale)) :]
        top = max(s.ttft_ms for s in shown) or 1.0
        line = Text()
        for sample in shown:
            level = min(len(BARS) - 1, max(0, round(sample.ttft_ms / top * len(BARS)) - 1))
            line.append(BARS[level], style=self._style(sample))
        line.append(scale, style="dim")
        return line

    def comparison(self) -> Text:
        text = Text()
        last_two = self.samples[-2:]
        labels = ("prev", "last") if len(last_two) == 2 else ("last",)
        for i, (label, sample) in enumerate(zip(labels, last_two, strict=True)):
            if i:
                text.append("\n")
            text.append(f"{label:<5}", style="dim")
            text.append(f"{format_ms(sample.ttft_ms):>7}", style=f"bold {self._style(sample)}")
            trim = "on " if sample.trimmed else "off"
            text.append(f"  {trim} {_tokens(sample.prompt_tokens):>6}", style="dim")
            if sample.cache_label:
                text.append(f"  {sample.cache_label}", style="dim")
        if len(last_two) == 2 and last_two[0].trimmed != last_two[1].trimmed:
            text.append("\n")
            text.append_text(trim_gain(*last_two))
        return text


def trim_gain(before: TtftSample, after: TtftSample) -> Text:
    """ "−47 % with trim on · last warm": the change, and whether the cache was alike."""
    change = after.ttft_ms / before.ttft_ms - 1 if before.ttft_ms > 0 else 0.0
    sign = "−" if change < 0 else "+"
    switch = "on" if after.trimmed else "off"
    text = Text(f"{sign}{abs(change):.0%} with trim {switch}", style="bold")
    labels = (before.cache_label, after.cache_label)
    if all(labels):
        warm = [label.startswith("warm") for label in labels]
        if not any(warm):
            text.append(" · both cold", style="dim")
        elif warm == [False, True]:
            text.append(" · last warm", style="dim")
        elif warm == [True, False]:
            text.append(" · prev warm", style="dim")
        else:
            text.append(" · both warm", style="dim")
    return text
