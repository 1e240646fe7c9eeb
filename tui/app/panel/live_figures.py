"""What the side panel shows while a request runs, computed from the runner's receipt times.

Pure and cheap: the panel's timer calls it a few times a second; nothing here touches a widget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui.engine.metrics.prefill import PrefillSample, first_token_eta_s
from tui.engine.metrics.record import decode_rate

if TYPE_CHECKING:
    from tui.session.run_state import RunState


@dataclass(frozen=True)
class LiveFigures:
    elapsed_ms: float  # since the request started (the live counter while waiting)
    ttfb_ms: float | None
    ttft_ms: float | None
    tokens: int  # chunks carrying a token so far
    decode_s: float  # first token -> latest token, receipt times
    retries: int
    streamed: bool
    # The first answer token after reasoning (None until it came, or without reasoning).
    answer_ms: float | None = None
    thinking: bool = False  # reasoning tokens came, the answer has not started yet
    paused_ms: float | None = None  # no token for this long: a pause going on now
    # The server's latest progress through the prompt while the first token is awaited, its
    # prefill rate, and the seconds left until the first token (counted down to now).
    prefill: PrefillSample | None = None
    prefill_rate: float | None = None
    prefill_eta_s: float | None = None

    def rates(self) -> tuple[float | None, float | None]:
        """TPOT (ms) and tokens/s so far, as the record computes them at the end: the tokens
        after the first over the span from the first to the latest (one token a chunk)."""
        return decode_rate(self.tokens - 1, self.decode_s)


def live_figures(state: RunState, now: float, streamed: bool) -> LiveFigures:
    """Figures at `now` (perf_counter seconds). TTFT counts from the engine's first attempt
    (retries inside); until the engine reports it started, from when the app handed it over."""
    start = state.started_at if state.started_at is not None else state.sent_at
    ttft = None if state.first_token_at is None else (state.first_token_at - start) * 1000
    ttfb = None if state.first_byte_at is None else (state.first_byte_at - start) * 1000
    decode = 0.0
    if state.first_token_at is not None and state.last_token_at is not None:
        decode = state.last_token_at - state.first_token_at
    answer = None
    if state.first_answer_at is not None and state.first_answer_at != state.first_token_at:
        answer = (state.first_answer_at - start) * 1000
    thinking = state.first_token_at is not None and state.first_answer_at is None
    paused = None
    since, seen = state.paused_since, state.paused_at
    # A pause goes on while no token came after the engine saw it.
    if since is not None and seen is not None and (state.last_token_at or 0.0) < seen:
        paused = (now - since) * 1000
    prefill = state.prefill if state.first_token_at is None else None
    sample = prefill.sample if prefill is not None else None
    rate = prefill.rate if prefill is not None else None
    eta = first_token_eta_s(sample, rate) if sample is not None else None
    if eta is not None and sample is not None:
        eta = max(0.0, eta - (now - sample.at))
    return LiveFigures(
        elapsed_ms=(now - start) * 1000,
        ttfb_ms=ttfb,
        ttft_ms=ttft,
        tokens=state.tokens,
        decode_s=decode,
        retries=state.retries,
        streamed=streamed,
        answer_ms=answer,
        thinking=thinking,
        paused_ms=paused,
        prefill=sample,
        prefill_rate=rate,
        prefill_eta_s=eta,
    )
