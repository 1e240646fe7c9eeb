"""A reasoning model's thinking in the app, against the demo's reasoning models: it streams
into a dimmed block above the answer, collapses once the answer starts, opens and closes with
its key (or a click), is kept with the reply (message and record), comes back with the chat,
is never sent back to the model, and reaches the screen inert."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.app_pilot import (
    WidgetsInApp,
    make_app,
    replies,
    send,
    send_and_wait,
    wait_for,
    wait_ready,
)

from tui.app.chat.reasoning_block import ReasoningBlock, reasoning_text
from tui.demo import DemoThread
from tui.engine.store.database import Store

REASONING = "firsttoken-demo-reasoning"


def block_of(app: Any) -> ReasoningBlock:
    block = replies(app)[-1].reasoning
    assert block is not None
    return block


def header(block: ReasoningBlock) -> str:
    return str(block.header.render())


def shown_text(block: ReasoningBlock) -> str:
    return str(block.body.render())


@pytest.mark.e2e
async def test_thinking_streams_into_the_block_before_the_answer(demo: DemoThread) -> None:
    # Five tokens, then the demo pauses for ten minutes: all five are thinking.
    app = make_app(
        f"{demo.root_url}/fault/stall-600000/v1",
        model=REASONING,
        chunk_timeout_ms=900_000,
        stall_timeout_ms=900_000,
        timeout_seconds=900,
    )
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "why is the sky blue?")
        runner = app.chat_screen.turn.current
        assert runner is not None
        await wait_for(
            pilot,
            lambda: (
                runner.state.tokens >= 5
                and replies(app)[-1].reasoning is not None
                and block_of(app).text == "".join(runner.state.reasoning)
            ),
            what="five thinking tokens in the block",
        )
        block = block_of(app)
        assert runner.state.first_answer_at is None
        assert block.text.startswith("The user sent 1 message")
        assert block.streaming and not block.collapsed and block.body.display
        assert shown_text(block) == block.text
        assert header(block).startswith("▼ thinking…")
        assert replies(app)[-1].source == ""  # no answer yet
        await pilot.press("escape")  # cancelled mid-thought: the thought stays, collapsed
        await wait_for(pilot, lambda: not app.chat_screen.busy, what="the cancel")
        assert block.collapsed and not block.streaming
        assert header(block).startswith("▶ thought")


@pytest.mark.e2e
async def test_the_block_collapses_once_the_answer_starts(slow_demo: DemoThread) -> None:
    # 60 tokens/s: the answer of 300 tokens streams for five seconds after the thinking.
    app = make_app(slow_demo.base_url, model=REASONING)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "why is the sky blue? reply 300 tokens")
        runner = app.chat_screen.turn.current
        assert runner is not None
        await wait_for(
            pilot,
            lambda: replies(app)[-1].reasoning is not None and block_of(app).collapsed,
            timeout=30,
            what="the block collapsed",
        )
        # Collapsed while the answer is still streaming: the answer started, and only that.
        assert runner.state.first_answer_at is not None
        assert runner.state.finished is None
        block = block_of(app)
        assert not block.body.display or block.has_class("-collapsed")
        assert "ctrl+f shows it" in header(block)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat_screen.busy, what="the cancelled reply")
        assert block.text == runner.state.finished.reasoning  # type: ignore[union-attr]
        assert "thought for" in header(block)


@pytest.mark.e2e
async def test_the_key_and_a_click_open_and_close_the_last_replys_thinking(
    demo: DemoThread,
) -> None:
    app = make_app(demo.base_url, model=REASONING)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "why is the sky blue?")
        block = block_of(app)
        await wait_for(pilot, lambda: block.collapsed, what="collapsed")
        await pilot.press("ctrl+f")
        assert not block.collapsed and "ctrl+f hides it" in header(block)
        await pilot.press("ctrl+f")
        assert block.collapsed
        await pilot.click(block.header)
        await pilot.pause()
        assert not block.collapsed
        # The prompt kept the focus (the key typed nothing into it).
        assert app.query_one("#prompt").text == ""


@pytest.mark.e2e
async def test_thinking_is_kept_shown_again_and_not_sent_back(
    demo: DemoThread, tmp_path: Path
) -> None:
    with Store(tmp_path / "history.sqlite3") as store:
        app = make_app(demo.base_url, store=store, model=REASONING)
        async with app.run_test(size=(110, 36)) as pilot:
            await wait_ready(pilot)
            await send_and_wait(pilot, "why is the sky blue?")
            thought = block_of(app).text
            assert thought
            chat_id = app.chat.state.chat_id
            assert app.chat.state.messages[-1]["reasoning_content"] == thought
            await send_and_wait(pilot, "and at sunset?")
            sent = demo.requests[-1]["messages"]
            assert [m["role"] for m in sent] == ["user", "assistant", "user"]
            assert all(set(m) == {"role", "content"} for m in sent)  # no thinking sent back
        assert chat_id is not None
        stored = store.messages(chat_id)
        assert stored[1]["reasoning_content"] == thought
        assert store.records(chat_id=chat_id)[-1]["reasoning_text"] == thought

        resumed = make_app(demo.base_url, store=store, resume_chat=chat_id, model=REASONING)
        async with resumed.run_test(size=(110, 36)) as pilot:
            await wait_ready(pilot)
            await wait_for(pilot, lambda: len(replies(resumed)) == 2, what="the chat reopened")
            first = replies(resumed)[0].reasoning
            assert first is not None and first.text == thought and first.collapsed
            await pilot.pause()
            assert "ctrl+f shows it" in header(first)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"role": "assistant", "content": "x", "reasoning_content": "why"}, "why"),
        ({"role": "assistant", "content": "x", "reasoning": "openrouter's"}, "openrouter's"),
        ({"role": "assistant", "content": "x", "reasoning_content": " "}, ""),
        ({"role": "assistant", "content": "x", "reasoning_details": []}, ""),
        ({"role": "assistant", "content": "x"}, ""),
    ],
)
def test_the_thinking_a_message_carries(message: dict[str, Any], expected: str) -> None:
    assert reasoning_text(message) == expected


async def test_the_thinking_reaches_the_screen_inert() -> None:
    hostile = "a\x1b]52;c;aGk=\x07b\x1b[2J\r\nc\x9bd"
    block = ReasoningBlock(hostile, collapsed=False)
    async with WidgetsInApp(block).run_test() as pilot:
        await pilot.pause()
        shown = shown_text(block)
        assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
        assert shown == "a␛]52;c;aGk=␇b␛[2J\nc\\x9bd"
        block.set_text(hostile + "\x1b[31m")
        assert shown_text(block).endswith("␛[31m")


@pytest.mark.parametrize(
    ("model", "shows_thinking"),
    [
        ("firsttoken-demo-reasoning-openrouter", True),  # `reasoning` deltas (OpenRouter)
        ("firsttoken-demo-openai-reasoning", False),  # thinks, never sends it (OpenAI)
        ("firsttoken-demo", False),  # no thinking at all
    ],
)
@pytest.mark.e2e
async def test_each_dialect_of_thinking(demo: DemoThread, model: str, shows_thinking: bool) -> None:
    app = make_app(demo.base_url, model=model)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_ready(pilot)
        record = await send_and_wait(pilot, "why is the sky blue?")
        assert record.status.value == "ok"
        block = replies(app)[-1].reasoning
        if shows_thinking:
            assert block is not None and block.collapsed
            assert block.text.startswith("The user sent 1 message")
            assert app.chat.state.messages[-1]["reasoning_content"] == block.text
        else:
            assert block is None
            assert "reasoning_content" not in app.chat.state.messages[-1]
        assert app.chat_screen.check_action("toggle_reasoning", ()) is shows_thinking


@pytest.mark.e2e
async def test_a_reply_without_streaming_shows_its_thinking_collapsed(demo: DemoThread) -> None:
    app = make_app(demo.base_url, model=REASONING)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_ready(pilot)
        await pilot.press("f3")  # streaming off: the thinking comes whole, with the answer
        record = await send_and_wait(pilot, "why is the sky blue?")
        assert not record.streamed
        block = block_of(app)
        assert block.collapsed and block.text.startswith("The user sent 1 message")
        # Thinking and answer arrived together: no duration to show.
        assert header(block).startswith("▶ thought · ")


async def test_the_terminal_matches_a_full_repaint_as_the_thinking_grows_and_folds() -> None:
    # The reply's block repaints only its new rows as it grows (the render seam): the
    # thinking growing above the answer, then folding to one line, must leave no stale cell.
    from helpers.virtual_terminal import VirtualTerminal, settled
    from textual.widgets import Static

    from tui.app.chat.chat_log import ChatLog
    from tui.app.chat.message_view import AssistantMessage

    app = WidgetsInApp(ChatLog(id="chat"))
    async with app.run_test(size=(60, 18)) as pilot:
        terminal = VirtualTerminal(app)
        chat = app.query_one(ChatLog)
        await chat.mount(Static("an earlier message\n" * 3))
        reply = AssistantMessage(0, model="demo")
        await chat.mount(reply)
        await pilot.pause()
        block = reply.reasoning_block()
        assert block is not None
        thought = ""
        for n in range(8):
            thought += f"Thought {n} weighs one more thing before the answer starts. "
            block.set_text(thought)
            await wait_for(pilot, lambda: settled(app), what="the thought painted")
            assert terminal.differences() == [], n
        await reply.markdown.append("## The answer\n\nIt starts here, below the thinking.")
        block.done(1.5)
        await wait_for(pilot, lambda: settled(app), what="the fold painted")
        assert terminal.differences() == []
        for _ in range(2):
            block.toggle()
            await wait_for(pilot, lambda: settled(app), what="the toggle painted")
            assert terminal.differences() == []
