"""The last TTFTs of this chat as a sparkline, plus the last two side by side (the trimming
off vs on demo: send once each way and compare)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Sparkline, Static

from tui.engine.metrics import RequestRecord, RequestStatus

HISTORY_LENGTH = 30


@dataclass(frozen=True)
class TtftSample:
    ttft_ms: float
    trimmed: bool
    streamed: bool
    prompt_tokens: int | None

    @classmethod
    def of(cls, record: RequestRecord) -> TtftSample | None:
        """A record's place in the history; None when it has no TTFT to show (it failed)."""
        if record.ttft_ms is None or record.status == RequestStatus.ERROR:
            return None
        prompt_tokens = record.prompt_tokens_usage or record.tokens_after
        return cls(record.ttft_ms, record.trim_enabled, record.streamed, prompt_tokens)


def format_ms(ms: float | None) -> str:
    if ms is None:
        return "—"
    if ms >= 10_000:
        return f"{ms / 1000:.1f} s"
    if ms >= 1_000:
        return f"{ms / 1000:.2f} s"
    return f"{ms:.0f} ms"


class TtftHistory(Vertical):
    DEFAULT_CSS = """
    TtftHistory { height: auto; }
    TtftHistory Sparkline { height: 2; }
    TtftHistory #compare { height: auto; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.samples: list[TtftSample] = []

    def compose(self) -> ComposeResult:
        spark = Sparkline([], id="spark")
        spark.display = False
        yield spark
        yield Static(Text("no requests yet", style="dim"), id="compare")

    def add(self, sample: TtftSample) -> None:
        self.samples.append(sample)
        del self.samples[:-HISTORY_LENGTH]
        self.refresh_view()

    def clear(self) -> None:
        self.samples.clear()
        self.refresh_view()

    def refresh_view(self) -> None:
        spark = self.query_one("#spark", Sparkline)
        spark.data = [s.ttft_ms for s in self.samples]
        spark.display = len(self.samples) >= 2  # one sample is a solid block, not a trend
        compare = self.query_one("#compare", Static)
        if not self.samples:
            compare.update(Text("no requests yet", style="dim"))
            return
        text = Text()
        last_two = self.samples[-2:]
        for label, sample in zip(("prev", "last"), last_two[-2:], strict=False):
            if len(last_two) == 1:
                label = "last"
            trim = "trim on " if sample.trimmed else "trim off"
            tokens = f" {sample.prompt_tokens:,} tok" if sample.prompt_tokens else ""
            text.append(f"{label:<5}", style="dim")
            text.append(f"{format_ms(sample.ttft_ms):>8}", style="bold")
            text.append(f"  {trim}{tokens}\n", style="dim")
        text.rstrip()
        compare.update(text)
