"""bench / sweep / check: the measured requests of `ask`, repeated and summarised for scripts.

- bench: one conversation sent four ways (trimmed or not × streamed or not), so the effect of
  each switch on TTFT and total time shows in one table.
- sweep: TTFT against prompt length: prompts of given token counts, and the line through
  their medians (ms per prompt token, and what is left at zero: network, queue, overhead).
- check: a model against the latency targets: a few requests per request class, p50 and p95
  TTFT against the class's target; the verdict is an exit code.

Honest numbers need three things every run here does. Warm-up requests go first and are
discarded (`warmup`): a process's first request pays for its connection and lazy set-up, and
would read tens of milliseconds high. Variants take turns, round by round (the order reversed
every other round), so drift on a shared machine hits them alike. And every request starts
with a tag of its own, so each is measured cold: servers such as llama.cpp and vLLM reuse the
previous request's prompt prefix, and a repeat would reach its first token in milliseconds,
measuring the cache instead of the prompt (the tag differs within a prompt's first tokens, so
at most the chat template's opening is reused: the server's `cached_tokens` shows it).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tui.engine.chat.events import Finished
from tui.engine.metrics.record import RequestRecord, RequestStatus, percentile

if TYPE_CHECKING:
    from tui.engine.chat.client import ChatClient
    from tui.engine.chat.request import ChatRequest
    from tui.engine.tokens.counter import TokenCounter

# The filler a sweep's prompts are made of: varied words, so no tokenizer packs it unusually.
FILLER = (
    "Latency budgets for interactive assistants are usually set per request class. "
    "A short question should see its first token within half a second, while a long "
    "generation may take two seconds before the first token appears. Prefill time grows "
    "with the prompt, so trimming old history, verbose tool results and repeated context "
    "is the cheapest way to bring the first token forward. "
)
SWEEP_QUESTION = "Reply with one short sentence: what is this text about?"
CHECK_QUESTION = "In two sentences, why does a shorter prompt reach its first token sooner?"


def tagged(messages: Sequence[dict[str, Any]], tag: str) -> list[dict[str, Any]]:
    """`messages` with `[tag]` opening the first one, so no cached prompt prefix is shared, and
    the first user message too: some chat templates leave the system prompt out (llama-cpp-python's
    `gemma` format does), and the tag must reach the model's prompt all the same."""
    out = [dict(message) for message in messages]
    first_user = next((i for i, m in enumerate(out) if m.get("role") == "user"), 0)
    for index in sorted({0, first_user}) if out else []:
        content = out[index].get("content")
        if isinstance(content, str) or content is None:
            out[index]["content"] = f"[{tag}] {content or ''}"
    return out


def new_tag() -> str:
    return f"run {secrets.token_hex(4)}"


@dataclass(frozen=True)
class Variant:
    """One way of sending: its label and the request (its messages are tagged per run)."""

    label: str
    request: ChatRequest


@dataclass
class VariantResult:
    label: str
    records: list[RequestRecord] = field(default_factory=list)
    trim: bool = False  # the variant's requests were trimmed
    stream: bool = True  # ...and streamed

    @property
    def ok(self) -> list[RequestRecord]:
        return [r for r in self.records if r.status is RequestStatus.OK]

    @property
    def failures(self) -> list[RequestRecord]:
        return [r for r in self.records if r.status is not RequestStatus.OK]

    def percentile(self, name: str, q: float) -> float | None:
        """The q-th percentile of a record figure over the successful runs."""
        return percentile([v for r in self.ok if (v := getattr(r, name)) is not None], q)

    def server_percentile(self, name: str, q: float) -> float | None:
        """The q-th percentile of a figure the server reported (`record.server[name]`, e.g.
        "prefill_ms", "cached_tokens") over the successful runs; None where it reported none."""
        values = [
            float(v)
            for r in self.ok
            if r.server is not None and isinstance(v := r.server.get(name), int | float)
        ]
        return percentile(values, q)

    @property
    def buffered(self) -> int:
        """How many runs arrived in one burst at the end (metrics/buffering.py)."""
        return sum(1 for r in self.records if r.buffered)

    @property
    def prompt_tokens(self) -> int | None:
        """What the prompt measured: the server's count when it gave one, else ours."""
        for record in self.ok or self.records:
            if record.prompt_tokens_usage is not None:
                return record.prompt_tokens_usage
        for record in self.records:
            if record.tokens_after is not None:
                return record.tokens_after
        return None


OnFinished = Callable[[str, Finished], None]
WARMUP_LABEL = "warm-up"


async def run_once(
    client: ChatClient, request: ChatRequest, cancel: asyncio.Event | None = None
) -> Finished:
    """One request, its events drained; the Finished (always exactly one)."""
    finished: Finished | None = None
    async for event in client.stream(request, cancel):
        if isinstance(event, Finished):
            finished = event
    assert finished is not None
    return finished


async def run_rounds(
    client: ChatClient,
    variants: Sequence[Variant],
    runs: int,
    on_finished: OnFinished,
    cancel: asyncio.Event | None = None,
    warmup: int = 0,
    on_warmup: OnFinished | None = None,
    on_start: Callable[[str], None] | None = None,
) -> list[VariantResult]:
    """Each variant `runs` times, taking turns round by round; stops early on `cancel`.
    First `warmup` requests of the first variant, discarded (`on_warmup` hears of them).
    `on_start` hears each request's label (WARMUP_LABEL for a warm-up) just before it goes."""
    results = {
        v.label: VariantResult(v.label, trim=v.request.trim is not None, stream=v.request.stream)
        for v in variants
    }
    for _ in range(warmup if variants else 0):
        if cancel is not None and cancel.is_set():
            return list(results.values())
        first = variants[0].request
        request = replace(first, messages=tagged(first.messages, new_tag()))
        if on_start is not None:
            on_start(WARMUP_LABEL)
        finished = await run_once(client, request, cancel)
        if on_warmup is not None:
            on_warmup(WARMUP_LABEL, finished)
    for round_number in range(runs):
        order = variants if round_number % 2 == 0 else list(reversed(variants))
        for variant in order:
            if cancel is not None and cancel.is_set():
                return list(results.values())
            request = replace(variant.request, messages=tagged(variant.request.messages, new_tag()))
            if on_start is not None:
                on_start(variant.label)
            finished = await run_once(client, request, cancel)
            on_finished(variant.label, finished)  # a cancelled request's record is kept too
            if finished.record.status is RequestStatus.CANCELLED:
                return list(results.values())  # ...but it measured nothing
            results[variant.label].records.append(finished.record)
    return list(results.values())


# -- sweep ------------------------------------------------------------------------------------


def filler_messages(tokens: int, counter: TokenCounter) -> list[dict[str, Any]]:
    """One user message of about `tokens` prompt tokens (as `counter` counts a whole request,
    with the tag each run adds): filler words, then the question."""
    words = FILLER.split()

    def message(n: int) -> list[dict[str, Any]]:
        text = " ".join(words[i % len(words)] for i in range(n))
        return [{"role": "user", "content": f"{text}\n\n{SWEEP_QUESTION}"}]

    low, high = 0, max(8, tokens * 2)
    while low < high:  # the most words that still fit in `tokens`, tag included
        middle = (low + high + 1) // 2
        if counter.count_messages(tagged(message(middle), new_tag())) <= tokens:
            low = middle
        else:
            high = middle - 1
    return message(low)


# When a straight line fits TTFT against prompt length poorly (see fit_warning).
MIN_R2 = 0.99
SLOPE_CHANGE = 0.15  # the per-token cost at the long end vs the short end
NEGATIVE_INTERCEPT_SHARE = 0.02  # of the longest TTFT (and at least NEGATIVE_INTERCEPT_MS)
NEGATIVE_INTERCEPT_MS = 20.0
MIN_SPREAD_MS = 20.0  # below this, TTFT hardly depends on the prompt: its shape is noise


@dataclass(frozen=True)
class LineFit:
    """TTFT ≈ intercept_ms + ms_per_token × prompt tokens (least squares over the medians),
    with how well it fits (`r2`) and the per-token cost between the two shortest and the two
    longest lengths (`first_slope`, `last_slope`: equal on a straight line)."""

    intercept_ms: float
    ms_per_token: float
    r2: float = 1.0
    first_slope: float | None = None
    last_slope: float | None = None
    longest_ms: float = 0.0
    spread_ms: float = 0.0  # the longest median TTFT minus the shortest

    @property
    def prefill_tokens_per_s(self) -> float | None:
        """Prompt tokens prefilled per second, from the slope."""
        return 1000.0 / self.ms_per_token if self.ms_per_token > 0 else None


def fit_line(points: Sequence[tuple[float, float]]) -> LineFit | None:
    """Least squares through (prompt tokens, TTFT ms); None with fewer than two lengths."""
    if len({x for x, _ in points}) < 2:
        return None
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in points)
    slope = sxy / sxx
    intercept = mean_y - slope * mean_x
    total = sum((y - mean_y) ** 2 for _, y in points)
    residual = sum((y - (intercept + slope * x)) ** 2 for x, y in points)
    r2 = 1.0 - residual / total if total > 0 else 1.0
    ordered = sorted(dict(points).items())  # one point per length
    first = last = None
    if len(ordered) >= 3:
        (x0, y0), (x1, y1) = ordered[0], ordered[1]
        (x2, y2), (x3, y3) = ordered[-2], ordered[-1]
        first, last = (y1 - y0) / (x1 - x0), (y3 - y2) / (x3 - x2)
    longest = max(y for _, y in points)
    spread = longest - min(y for _, y in points)
    return LineFit(intercept, slope, r2, first, last, longest, spread)


def fit_warning(fit: LineFit) -> str | None:
    """Why a straight line is a poor description of these points, or None when it is a good
    one: R² below MIN_R2, the per-token cost changing by more than SLOPE_CHANGE from the short
    prompts to the long ones, or an intercept clearly below zero (impossible for a real TTFT:
    the line is bent by prompts that cost more per token). Not judged when TTFT hardly changes
    with the prompt (under MIN_SPREAD_MS from shortest to longest)."""
    if fit.spread_ms < MIN_SPREAD_MS:
        return None
    reasons = []
    if fit.r2 < MIN_R2:
        reasons.append(f"R² {fit.r2:.3f}")
    first, last = fit.first_slope, fit.last_slope
    if first is not None and last is not None and first > 0:
        change = (last - first) / first
        if abs(change) > SLOPE_CHANGE:
            reasons.append(
                f"per-token cost {first:.2f} → {last:.2f} ms from the shortest prompts to the "
                f"longest ({change:+.0%})"
            )
    floor = max(NEGATIVE_INTERCEPT_MS, NEGATIVE_INTERCEPT_SHARE * fit.longest_ms)
    if fit.intercept_ms < -floor:
        reasons.append(f"intercept {fit.intercept_ms:,.0f} ms, below zero")
    if not reasons:
        return None
    growing = last is not None and first is not None and last > first
    shape = "TTFT grows faster than linearly" if growing else "TTFT is not linear in the prompt"
    return (
        f"a straight line fits poorly ({'; '.join(reasons)}): {shape} here, so ms per token "
        "depends on the prompt's length; read the table, not the line"
    )


# -- check ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClassVerdict:
    """A request class's TTFT over its runs against its target."""

    name: str
    target_ms: float
    result: VariantResult

    @property
    def p50_ms(self) -> float | None:
        return self.result.percentile("ttft_ms", 50)

    @property
    def p95_ms(self) -> float | None:
        return self.result.percentile("ttft_ms", 95)

    @property
    def met(self) -> bool:
        """Every run succeeded, none arrived buffered (a stream held back by a proxy: its TTFT
        is the whole reply's), and the median is within the target (as one request is judged:
        its TTFT against its class's target)."""
        p50 = self.p50_ms
        return (
            not self.result.failures
            and not self.result.buffered
            and p50 is not None
            and p50 <= self.target_ms
        )
