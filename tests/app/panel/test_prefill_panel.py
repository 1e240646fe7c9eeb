"""The panel while a llama.cpp server computes a long prompt: the app asks for its prompt
progress, and the panel shows how far it got (a bar, processed and cached tokens, the server's
prefill rate, the first token's ETA) beside the live TTFT counter, until the first token; the
record keeps the prefill rate the server reported. Over real HTTP, against the demo playing
llama-server, whose progress chunks follow its prefill schedule."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.app_pilot import make_app, send_and_wait, wait_for, wait_ready
from textual.widgets import Static

from tui.app.app import FirstTokenApp
from tui.demo import DemoThread, start_demo_in_thread
from tui.demo.latency_model import latency_model

pytestmark = pytest.mark.e2e

PREFILL_MS_PER_TOKEN = 1.5  # ~8 s for the F6 sample: several progress chunks, then the reply


@pytest.fixture
def slow_prefill() -> Iterator[DemoThread]:
    overrides = {
        "server": "llamacpp",
        "prefill_ms_per_token": PREFILL_MS_PER_TOKEN,
        "decode_tokens_per_s": 400.0,
    }
    thread = start_demo_in_thread(latency_model("instant", overrides))
    try:
        yield thread
    finally:
        thread.stop()


def timings(app: FirstTokenApp) -> str:
    return str(app.query_one("#timings", Static).content)


async def test_the_panel_shows_the_prefill_while_the_first_token_is_awaited(
    slow_prefill: DemoThread,
) -> None:
    app = make_app(slow_prefill.base_url, llamacpp=True)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("f6")
        await pilot.press("enter")
        # A progress chunk past the first: some of the prompt done, a rate, an ETA.
        await wait_for(
            pilot,
            lambda: "tok/s · first token ~" in timings(app),
            timeout=60,
            what="the prefill's progress in the panel",
        )
        shown = timings(app)
        assert "prefill " in shown and "%" in shown and " of " in shown
        assert app.chat_screen.busy and "waiting…" in str(
            app.query_one("#ttft-label", Static).content
        )
        [entry] = [e for e in slow_prefill.requests if e["stream"]][-1:]
        assert entry["return_progress"] is True
        await wait_for(pilot, lambda: not app.chat_screen.busy, timeout=60, what="the reply")
        record = app.chat_screen.last_record
        assert record is not None and record.status.value == "ok"
        # The server's own figures: prompt_n tokens over prompt_ms.
        assert record.prefill_tokens_per_s == pytest.approx(1000 / PREFILL_MS_PER_TOKEN, rel=1e-3)
        assert record.prompt_progress is not None and len(record.prompt_progress) >= 3
        last = record.prompt_progress[-1]
        assert last["processed"] == last["total"] == record.server["prompt_tokens"]
        assert "first token ~" not in timings(app)
        assert f"prefill {1000 / PREFILL_MS_PER_TOKEN:,.0f} tok/s" in timings(app)


async def test_the_panel_shows_the_prompts_kv_cache_and_the_contexts_beside_the_budget(
    slow_prefill: DemoThread,
) -> None:
    # A model a preset names, on a server whose model list states its context (meta.n_ctx).
    app = make_app(slow_prefill.base_url, llamacpp=True, model="gemma-3-270m")
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        assert not app.query_one("#kv-cache", Static).display  # nothing known yet
        await send_and_wait(pilot, "hello there, reply 4 tokens")
        record = app.chat_screen.last_record
        assert record is not None and record.kv_cache is not None
        kv = record.kv_cache
        assert (kv["architecture"], kv["cache_type"], kv["context_tokens"]) == (
            "Gemma 3 270M",
            "f16",
            8192,
        )
        # 18 layers x 1 KV head x 256 dims, K and V at 2 bytes; every prompt token in the window.
        assert kv["prompt_bytes"] == 18 * 2 * 256 * 2 * record.server["prompt_tokens"]
        shown = str(app.query_one("#kv-cache", Static).content)
        assert app.query_one("#kv-cache", Static).display
        assert shown.startswith("KV ") and "f16 · 8,192-token context" in shown
