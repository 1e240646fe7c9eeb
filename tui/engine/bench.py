"""bench / sweep / check: the measured requests of `ask`, repeated and summarised for scripts.

- bench: one conversation sent four ways (trimmed or not × streamed or not), so the effect of
  each switch on TTFT and total time shows in one table.
- sweep: TTFT against prompt length: prompts of given token counts, and the line through
  their medians (ms per prompt token, and what is left at zero: network, queue, overhead).
- check: a model against the latency targets: a few requests per request class, p50 and p95
  TTFT against the class's target; the verdict is an exit code.

Honest numbers need two things every run here does. Variants take turns, round by round
(the order reversed every other round), so drift on a shared machine hits them alike. And
every request starts with a tag of its own: servers such as llama.cpp reuse the previous
request's prompt prefix, and a repeat would reach its first token in milliseconds, measuring
the cache instead of the prompt.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tui.engine.events import Finished
from tui.engine.metrics import RequestRecord, RequestStatus, percentile

if TYPE_CHECKING:
    from tui.engine.client import ChatClient, ChatRequest
    from tui.engine.tokens import TokenCounter

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
    """`messages` with `[tag]` opening the first one, so no cached prompt prefix is shared."""
    out = [dict(message) for message in messages]
    if out:
        content = out[0].get("content")
        if isinstance(content, str) or content is None:
            out[0]["content"] = f"[{tag}] {content or ''}"
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

    @property
    def ok(self) -> list[RequestRecord]:
        return [r for r in self.records if r.status is RequestStatus.OK]

    @property
    def failures(self) -> list[RequestRecord]:
        return [r for r in self.records if r.status is not RequestStatus.OK]

    def percentile(self, name: str, q: float) -> float | None:
        """The q-th percentile of a record figure over the successful runs."""
        return percentile([v for r in self.ok if (v := getattr(r, name)) is not None], q)

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
) -> list[VariantResult]:
    """Each variant `runs` times, taking turns round by round; stops early on `cancel`."""
    results = {v.label: VariantResult(v.label) for v in variants}
    for round_number in range(runs):
        order = variants if round_number % 2 == 0 else list(reversed(variants))
        for variant in order:
            if cancel is not None and cancel.is_set():
                return list(results.values())
            request = replace(variant.request, messages=tagged(variant.request.messages, new_tag()))
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


@dataclass(frozen=True)
class LineFit:
    """TTFT ≈ intercept_ms + ms_per_token × prompt tokens (least squares over the medians)."""

    intercept_ms: float
    ms_per_token: float


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
    return LineFit(mean_y - slope * mean_x, slope)


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
        """Every run succeeded and the median is within the target (as the app judges one
        request: its TTFT against the target)."""
        p50 = self.p50_ms
        return not self.result.failures and p50 is not None and p50 <= self.target_ms
