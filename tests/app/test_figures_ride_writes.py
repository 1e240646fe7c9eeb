"""While a reply streams, the side panel's live figures are shown with the reply's writes, in
the writes' frames, instead of in frames of their own; when the stream stalls (no writes),
the panel's timer shows them itself, so the running total never freezes."""

from __future__ import annotations

import asyncio
from typing import Any

from app_helpers import WidgetsInApp, make_app, send, wait_for, wait_ready
from textual.widgets import Static
from virtual_terminal import VirtualTerminal, settled

from tui.app.widgets.chat_log import ChatLog
from tui.app.widgets.latency_panel import LatencyPanel
from tui.app.widgets.message_view import AssistantMessage
from tui.app.widgets.reply_writer import ReplyWriter
from tui.engine.demo_server import DemoThread


def record_live_figures(monkeypatch: Any, app: Any) -> list[int]:
    """The reply writer's write count at each live-figures update of the panel."""
    shown: list[int] = []
    show_live = LatencyPanel.show_live

    def recorded(panel: LatencyPanel, live: Any) -> None:
        runner = app.chat_screen.turn.runner
        if runner is not None and runner.state.first_token_at is not None:
            shown.append(runner.writer.flushes)
        show_live(panel, live)

    monkeypatch.setattr(LatencyPanel, "show_live", recorded)
    return shown


async def test_streaming_figures_share_the_frames_of_the_writes(
    slow_demo: DemoThread, monkeypatch: Any
) -> None:
    app = make_app(slow_demo.base_url)
    shown = record_live_figures(monkeypatch, app)
    async with app.run_test(size=(120, 36)) as pilot:
        terminal = VirtualTerminal(app)
        await wait_ready(pilot)
        # ~5 s at 60 tokens/s: on a loaded machine the wait for the first figures below can
        # take a good part of a shorter reply, leaving too few frames to judge (seen once).
        await send(pilot, "reply 300 tokens")
        # From a few writes after the first figures on: the first token changes the panel on
        # its own (TTFT, its colour), and the colour's style change is a frame of its own.
        await wait_for(
            pilot,
            lambda: (
                app.chat_screen.turn.runner is not None
                and len(shown) > 0
                and app.chat_screen.turn.runner.writer.flushes > shown[0] + 2
            ),
            what="the first figures",
        )
        writer = app.chat_screen.turn.runner.writer
        panel_x = app.query_one(LatencyPanel).region.x
        terminal.note = lambda: writer.flushes  # the writes so far, as each frame is painted
        first_frame = terminal.frames
        await wait_for(pilot, lambda: not app.chat_screen.busy, timeout=30, what="the reply")
        await wait_for(pilot, lambda: settled(app), what="the end of the reply to be painted")
        assert terminal.differences() == []
    assert len(shown) >= 5  # the figures kept changing while the reply streamed (~5 s)...
    # ...but in the frames of the reply's writes: the frames that changed the panel, each
    # with a write since the frame before. (Shown by the panel's timer, each would be a
    # frame of its own; the timer still does that when no write comes for 0.3 s.)
    writes = terminal.notes
    streaming = range(first_frame + 1, len(writes))
    panel_frames = [
        n for n in streaming if writes[n] != writes[-1] and max(terminal.painted[n]) >= panel_x
    ]
    alone = [n for n in panel_frames if writes[n] == writes[n - 1]]
    assert len(panel_frames) >= 4
    assert len(alone) <= 1, (panel_frames, alone, writes)


async def test_a_stalled_stream_still_shows_the_running_figures(
    demo: DemoThread, monkeypatch: Any
) -> None:
    # Five tokens, then nothing for 1.5 s: no writes, so the timer shows the figures itself.
    app = make_app(f"{demo.root_url}/fault/stall-1500/v1", chunk_timeout_ms=10_000)
    shown = record_live_figures(monkeypatch, app)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.engine.client is not None, what="the engine")
        await send(pilot, "reply 20 tokens")
        await wait_for(pilot, lambda: not app.chat_screen.busy, timeout=30, what="the reply")
    during_the_stall = [writes for writes in shown if writes == shown[0]]
    assert len(during_the_stall) >= 3  # ~3 Hz for 1.5 s, with no write between them


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
            await asyncio.sleep(0.3)
            shown = "\n".join("".join(c for c, _ in row) for row in terminal.rows)
            assert word.strip() in shown and "after" in shown
        writer.end()
        await writer.finish(None)
