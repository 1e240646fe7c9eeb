"""F6 starts the trimming demo afresh: the chat's TTFTs and the last-two comparison are the
sample's own sends, never a request of the chat before it; during a reply it says why it waits."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.app_pilot import make_app, send, send_and_wait, wait_for, wait_ready

from tui.app.panel.ttft_history import TtftHistory
from tui.demo import DemoThread

pytestmark = pytest.mark.e2e


def said_by(app: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every notification's text from now on."""
    said: list[str] = []
    notify = app.notify

    def noted(message: str, **options: Any) -> None:
        said.append(message)
        notify(message, **options)

    monkeypatch.setattr(app, "notify", noted)
    return said


async def press_and_wait_reply(pilot: Any, key: str) -> None:
    app = pilot.app
    before = app.chat_screen.last_record
    await pilot.press(key)
    await wait_for(
        pilot,
        lambda: app.chat_screen.last_record is not before and not app.chat_screen.busy,
        what=f"the reply after {key}",
    )


async def test_f6_clears_the_chats_ttfts_and_compares_the_two_sample_sends(
    demo: DemoThread,
) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "hello, reply 5 tokens")  # a tiny prompt, a fast TTFT
        history = app.query_one(TtftHistory)
        assert len(history.samples) == 1
        await pilot.press("f6")
        await wait_for(pilot, app.chat.state.awaiting_reply, what="the sample")
        await pilot.pause(0.05)
        assert history.samples == [] and app.chat_screen.last_record is None
        assert history.render_history(34).plain == "no requests yet"
        assert str(app.query_one("#ttft").value) == "--"  # type: ignore[attr-defined]
        await press_and_wait_reply(pilot, "enter")  # the sample, trimmed
        await pilot.press("ctrl+t")  # trimming off
        await press_and_wait_reply(pilot, "f5")  # the sample again, whole
        samples = history.samples
        assert [s.trimmed for s in samples] == [True, False]
        assert all(s.prompt_tokens is not None and s.prompt_tokens > 1000 for s in samples)
        comparison = history.comparison().plain
        assert "with trim off" in comparison


async def test_f6_during_a_reply_says_why_it_waits(
    slow_demo: DemoThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(slow_demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        said = said_by(app, monkeypatch)
        await send(pilot, "hello, reply 400 tokens")
        await wait_for(pilot, lambda: app.chat_screen.busy, what="the reply under way")
        messages = list(app.chat.state.messages)
        await pilot.press("f6")
        await pilot.pause(0.05)
        assert app.chat.state.messages[: len(messages)] == messages  # not replaced
        assert said and "f6" in said[-1] and "esc" in said[-1], said
        await pilot.press("escape")
