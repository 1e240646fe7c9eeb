"""The app against the real server through Pilot: F6's sample conversation, tool calls and all,
answered and timed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers.app_pilot import firsttoken_app
from real_server_support import SAMPLE_BUDGET, RealServer, real_config
from textual.pilot import Pilot
from textual.widgets import Digits

from tui.engine.metrics.record import RequestStatus
from tui.wiring import Endpoint

REPLY_TIMEOUT_S = 600.0  # a second on an idle machine; minutes on a loaded one


async def _wait_for(pilot: Pilot[Any], predicate: Callable[[], bool], what: str) -> None:
    for _ in range(int(REPLY_TIMEOUT_S / 0.05)):
        if predicate():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _calls_tools(message: dict[str, Any]) -> bool:
    return message.get("role") == "assistant" and bool(message.get("tool_calls"))


async def test_f6_sample_with_tool_calls_streams_a_reply_and_the_panel_shows_its_ttft(
    llama_server: RealServer,
) -> None:
    config = real_config(llama_server.base_url, max_tokens=16, token_budget=SAMPLE_BUDGET)
    endpoint = Endpoint(llama_server.base_url, None)
    app = firsttoken_app(config, endpoint)
    async with app.run_test(size=(130, 40)) as pilot:
        await _wait_for(
            pilot,
            lambda: app.chat.engine.connected and app.chat_screen.preview is not None,
            "warm-up",
        )
        await pilot.press("f6")
        await _wait_for(pilot, lambda: len(app.chat.state.messages) > 10, "the sample")
        sample = list(app.chat.state.messages)
        await pilot.press("enter")  # an empty prompt sends the conversation as it stands
        await _wait_for(
            pilot,
            lambda: app.chat_screen.last_record is not None and not app.chat_screen.busy,
            "the reply",
        )

        record = app.chat_screen.last_record
        assert record is not None
        assert record.status is RequestStatus.OK, record.error_message
        assert record.streamed and record.trim_enabled
        # What was sent still had tool calls and their results in it.
        dropped = {message.index for message in record.dropped}
        kept = [m for i, m in enumerate(sample) if i not in dropped]
        assert any(_calls_tools(m) for m in kept) and any(m["role"] == "tool" for m in kept)
        reply = app.chat.state.messages[-1]
        assert reply["role"] == "assistant" and reply["content"].strip()
        # The panel's large TTFT is the record's.
        assert record.ttft_ms is not None
        ms = record.ttft_ms
        shown = app.query_one("#ttft", Digits).value
        assert shown in {f"{ms:.0f}", f"{ms / 1000:.2f}", f"{ms / 1000:.1f}"}


async def test_the_sample_count_is_an_estimate_here(llama_server: RealServer) -> None:
    """This server counts texts, not the templated prompt (its `gemma` format drops the
    sample's system prompt and tool results): the gauge must say ≈ however many messages its
    tokenizer counted."""
    config = real_config(llama_server.base_url, max_tokens=8, token_budget=SAMPLE_BUDGET)
    app = firsttoken_app(config, Endpoint(llama_server.base_url, None))
    async with app.run_test(size=(130, 40)) as pilot:
        await _wait_for(
            pilot,
            lambda: app.chat.engine.connected and app.chat_screen.preview is not None,
            "warm-up",
        )
        await pilot.press(*"hello, in one word", "enter")  # a reply: the tokenizer is probed
        await _wait_for(
            pilot, lambda: app.chat_screen.last_record is not None and not app.chat_screen.busy,
            "the reply",
        )  # fmt: skip
        await pilot.press("f6")
        await _wait_for(pilot, lambda: len(app.chat.state.messages) > 10, "the sample")
        counts = app.chat.counts
        await _wait_for(
            pilot,
            lambda: counts._counts is not None and counts._counts.known(app.chat.state.messages),
            "the server's counts of the sample",
        )
        await pilot.pause(0.3)
        preview = app.chat_screen.preview
        assert preview is not None and preview.exact is False
