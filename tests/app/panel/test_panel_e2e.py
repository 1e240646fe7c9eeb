"""The panel against the demo endpoint over real HTTP: the server's own prompt count in the
budget gauge (no `≈`), TTFT's parts and the cached prompt tokens from llama.cpp's own figures,
a pause shown while it lasts, a reasoning model's time to first answer, a buffered stream."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.app_pilot import make_app, replies, send, send_and_wait, wait_for, wait_ready
from textual.widgets import Static

from tui.app.app import FirstTokenApp
from tui.app.chat.prompt_input import PromptInput
from tui.app.panel.budget_gauge import BudgetGauge
from tui.app.panel.ttft_history import format_ms
from tui.app.panel.ttft_waterfall import TtftWaterfall
from tui.demo import DemoThread, start_demo_in_thread
from tui.demo.latency_model import latency_model
from tui.engine.tokens.server_counts import ServerCounts
from tui.locations import server_tokenizers_path

pytestmark = pytest.mark.e2e


@pytest.fixture
def llamacpp_demo() -> Iterator[DemoThread]:
    """The demo playing llama.cpp's llama-server: its tokenizer endpoints, `timings` and
    cached prompt tokens, with its prefix cache; no other latency."""
    overrides = {"server": "llamacpp", "prefix_cache": True, "decode_tokens_per_s": 400.0}
    thread = start_demo_in_thread(latency_model("instant", overrides))
    try:
        yield thread
    finally:
        thread.stop()


def text(app: FirstTokenApp, selector: str) -> str:
    return str(app.query_one(selector, Static).content)


def tokens_shown(app: FirstTokenApp) -> int | None:
    figures = app.query_one(BudgetGauge).figures
    return None if figures is None else figures.tokens_after


def gauge_exact(app: FirstTokenApp) -> bool:
    figures = app.query_one(BudgetGauge).figures
    return figures is not None and figures.exact


async def test_the_gauge_shows_the_servers_own_count_and_the_server_agrees(
    llamacpp_demo: DemoThread,
) -> None:
    app = make_app(llamacpp_demo.base_url)
    async with app.run_test(size=(130, 36)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "first, reply 12 tokens")
        await wait_for(pilot, lambda: gauge_exact(app), what="the server's count in the gauge")
        before_typing = tokens_shown(app)
        app.query_one(PromptInput).focus()
        await pilot.press(*"and a second question")
        # The draft is counted by the server too (after the preview's debounce).
        await wait_for(
            pilot,
            lambda: gauge_exact(app) and tokens_shown(app) != before_typing,
            what="the draft counted by the server",
        )
        shown = tokens_shown(app)
        assert "≈" not in str(app.query_one(BudgetGauge).content)
        assert isinstance(app.chat.engine.counter, ServerCounts)  # the trimmer counts the same way
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: not app.chat_screen.busy and len(app.chat.state.messages) == 4
        )
        record = app.chat_screen.last_record
        assert record is not None and record.prompt_tokens_usage == shown
        assert record.prompt_tokens_source == "server_text"  # trimmed by the server's counts


async def test_without_a_server_tokenizer_the_gauge_says_it_estimates(demo: DemoThread) -> None:
    app = make_app(demo.base_url)  # the demo playing OpenAI: no tokenizer endpoint
    async with app.run_test(size=(130, 36)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "first, reply 12 tokens")
        await pilot.press(*"more")
        await wait_for(pilot, lambda: "≈" in str(app.query_one(BudgetGauge).content))
        assert not gauge_exact(app) and not isinstance(app.chat.engine.counter, ServerCounts)


async def test_ttft_parts_and_cached_tokens_from_the_servers_figures(
    llamacpp_demo: DemoThread,
) -> None:
    app = make_app(llamacpp_demo.base_url)
    async with app.run_test(size=(130, 36)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "what is a prefix cache? reply 12 tokens")
        record = await send_and_wait(pilot, "and why does it help? reply 12 tokens")
        assert record.server is not None and record.server["cached_tokens"]
        cached = record.server["cached_tokens"]
        assert f"cached {cached:,} of {record.server['prompt_tokens']:,}" in text(app, "#timings")
        legend = str(app.query_one(TtftWaterfall).content)
        assert "prefill" in legend and "net+queue" in legend
        assert ("reused" in legend) == bool(record.connection_reused)


async def test_a_pause_is_shown_live_and_the_reply_goes_on(demo: DemoThread) -> None:
    # The demo pauses for 10 minutes after the fifth token; a pause is 300 ms without one.
    app = make_app(
        f"{demo.root_url}/fault/stall-600000/v1",
        chunk_timeout_ms=300,
        stall_timeout_ms=900_000,
        timeout_seconds=900,
    )
    async with app.run_test(size=(130, 36)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "tell me something")
        await wait_for(pilot, lambda: "no token for" in text(app, "#timings"), what="the pause")
        assert "no token for" in str(replies(app)[-1].border_subtitle)
        assert app.chat_screen.busy  # the stream is not given up
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat_screen.busy, what="the cancel")


async def test_a_finished_reply_counts_its_pauses_and_its_longest_gap(demo: DemoThread) -> None:
    # An 800 ms pause halfway, with 300 ms as the pause limit: the reply ends normally.
    app = make_app(f"{demo.root_url}/fault/pause-800/v1", chunk_timeout_ms=300)
    async with app.run_test(size=(130, 36)) as pilot:
        await wait_ready(pilot)
        record = await send_and_wait(pilot, "hello, reply 20 tokens")
        assert record.status.value == "ok" and record.pauses == 1
        # Over the pause limit, as counting it a pause says; how far over is the machine's to
        # say (a late first receipt shortens the gap the client saw).
        assert record.longest_gap_ms is not None and record.longest_gap_ms > 300
        timings = text(app, "#timings")
        assert "1 pause, the reply went on" in timings
        assert f"gap    {format_ms(record.longest_gap_ms)}" in timings


async def test_a_reasoning_models_time_to_first_answer(llamacpp_demo: DemoThread) -> None:
    app = make_app(llamacpp_demo.base_url, model="firsttoken-demo-reasoning")
    async with app.run_test(size=(130, 36)) as pilot:
        await wait_ready(pilot)
        record = await send_and_wait(pilot, "think 20 tokens, reply 10 tokens")
        assert record.time_to_first_answer_ms is not None and record.ttft_ms is not None
        assert record.time_to_first_answer_ms > record.ttft_ms
        answer = format_ms(record.time_to_first_answer_ms)
        assert f"answer {answer}" in text(app, "#ttft-label")
        if record.reasoning_tokens:
            assert f"thinking {record.reasoning_tokens} tok" in text(app, "#timings")


async def test_a_buffered_stream_is_caught_and_the_fix_shown(paced_demo: DemoThread) -> None:
    # 80 tokens at 400 tokens/s: a 200 ms reply, held back and sent in one write at its end.
    app = make_app(f"{paced_demo.root_url}/fault/buffered/v1")
    async with app.run_test(size=(130, 36)) as pilot:
        await wait_ready(pilot)
        record = await send_and_wait(pilot, "hello, reply 80 tokens")
        assert record.buffered is True
        assert "proxy_buffering off" in text(app, "#timings")


async def test_the_tokenizer_is_probed_only_after_the_first_reply(
    llamacpp_demo: DemoThread,
) -> None:
    # As `ask` does: the first request never waits behind the probe's requests.
    app = make_app(llamacpp_demo.base_url)
    async with app.run_test(size=(130, 36)) as pilot:
        await wait_ready(pilot)
        app.query_one(PromptInput).focus()
        await pilot.press(*"a first question")
        await wait_for(pilot, lambda: (tokens_shown(app) or 0) > 5, what="the draft counted")
        assert not gauge_exact(app)
        assert not server_tokenizers_path().exists()  # nothing probed, nothing remembered
        await pilot.press("enter")
        await wait_for(pilot, lambda: gauge_exact(app), what="the server's count after it")
        assert server_tokenizers_path().exists()
