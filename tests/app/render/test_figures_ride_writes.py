"""While a reply streams, the side panel's live figures are shown with the reply's writes, in
the writes' frames, instead of in frames of their own; when the stream stalls (no writes),
the panel's timer shows them itself, so the running total never freezes.

The clock is frozen (FrozenClock) and the panel's timer is stopped: each tick and each write
is a step of the test, so what is painted with what does not depend on how the machine's
load happened to space them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.app_pilot import FrozenClock, WidgetsInApp, make_app, send, wait_for, wait_ready
from helpers.virtual_terminal import VirtualTerminal, settled
from textual.widgets import Static

import tui.app.screens.chat_screen
from tui.app.chat.chat_log import ChatLog
from tui.app.chat.message_view import AssistantMessage
from tui.app.chat.reply_turn import STREAMING_TICK_EVERY, WRITES_CARRY_FIGURES_S
from tui.app.chat.reply_writer import ReplyWriter
from tui.app.panel.latency_panel import LatencyPanel
from tui.demo import DemoThread


def panel_frames(terminal: VirtualTerminal, since: int, panel: Any) -> list[int]:
    """The frames from `since` on that painted any cell of the panel."""
    cells = {(x, y) for x in range(panel.x, panel.right) for y in range(panel.y, panel.bottom)}
    return [n for n in range(since, terminal.frames) if terminal.painted_cells[n] & cells]


@pytest.mark.e2e
async def test_streaming_figures_share_the_frames_of_the_writes_until_the_stream_stalls(
    demo: DemoThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tui.app.screens.chat_screen, "PANEL_TICK_S", 3600.0)  # ticks by hand
    # Five tokens, then the stream pauses for ten minutes: the test writes what follows.
    app = make_app(f"{demo.root_url}/fault/stall-600000/v1", chunk_timeout_ms=900_000)
    async with app.run_test(size=(120, 36)) as pilot:
        terminal = VirtualTerminal(app)
        await wait_ready(pilot)
        await send(pilot, "reply 300 tokens")
        turn = app.chat_screen.turn
        await wait_for(
            pilot,
            lambda: (
                turn.current is not None
                and turn.current.state.tokens == 5
                and turn.writer.writes > 0
                and not turn.writer._pending
                and settled(app)
            ),
            what="the first five tokens on screen",
        )
        clock = FrozenClock(monkeypatch)
        writer = turn.writer
        terminal.note = lambda: writer.writes  # the writes so far, as each frame is painted
        panel = app.query_one(LatencyPanel).region

        # Writes are flowing (the last one "just now"): the ticks leave the figures to the
        # next write.
        before = terminal.frames
        for _ in range(STREAMING_TICK_EVERY):
            turn.tick()
        await wait_for(pilot, lambda: settled(app), what="the ticks' effect")
        assert panel_frames(terminal, before, panel) == []

        # The next write carries them, in its own frame.
        clock.advance(0.1)  # the figures differ from those on screen
        before, written = terminal.frames, writer.writes
        writer.feed(" and more words")
        await wait_for(
            pilot, lambda: writer.writes > written and settled(app), what="the write on screen"
        )
        shown = panel_frames(terminal, before, panel)
        assert shown, "the figures were not shown with the write"
        assert all(terminal.notes[n] > written for n in shown), (shown, terminal.notes)
        assert terminal.differences() == []

        # No write for longer than WRITES_CARRY_FIGURES_S: the stream stalls, and the tick
        # shows the figures in a frame of its own, with no write.
        clock.advance(WRITES_CARRY_FIGURES_S + 0.1)
        before, written = terminal.frames, writer.writes
        for _ in range(STREAMING_TICK_EVERY):
            turn.tick()
        await wait_for(pilot, lambda: settled(app), what="the stalled figures on screen")
        shown = panel_frames(terminal, before, panel)
        assert shown and all(terminal.notes[n] == written for n in shown)
        assert terminal.differences() == []
        turn.cancel()
        await wait_for(pilot, lambda: not turn.busy, what="the cancelled reply")


async def test_a_held_write_is_painted_without_anything_else_happening() -> None:
    # Frames are held while a write is appended; the held frame must still be painted when
    # the write is done, not when something else next wakes the screen up. Plain sleeps
    # here: Pilot's pauses would wake it up.
    status = Static("before", id="status")
    app = WidgetsInApp(ChatLog(id="chat"), status)
    async with app.run_test(size=(60, 18)) as pilot:
        terminal = VirtualTerminal(app)
        reply = AssistantMessage(0, model="demo")
        await app.query_one(ChatLog).mount(reply)
        await pilot.pause()
        writer = ReplyWriter(reply.markdown, interval_s=0.01)
        writer.with_write = lambda: status.update("after")
        writer.start()
        for word in ("first", " second", " third"):
            writer.feed(word)
            for _ in range(500):  # a hang guard: nothing but the write can paint this
                if word.strip() in terminal.text() and "after" in terminal.text():
                    break
                await asyncio.sleep(0.02)
            assert word.strip() in terminal.text() and "after" in terminal.text()
        writer.end()
        await writer.finish(None)
