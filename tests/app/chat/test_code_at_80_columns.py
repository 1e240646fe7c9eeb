"""At 80 columns with the side panel open, a reply's code lines wider than the chat wrap in
their block: every character is on screen (they were cut at the block's edge, scrollable
only by a mouse that knew to try, with nothing to say so)."""

from __future__ import annotations

import pytest
from helpers.app_pilot import make_app, send_and_wait, wait_ready
from helpers.virtual_terminal import VirtualTerminal

from tui.app.panel.latency_panel import LatencyPanel
from tui.demo import DemoThread

pytestmark = pytest.mark.e2e

CODE_LINE = "def ttft_ms(prompt_tokens: int) -> float:"  # the demo reply's code block


async def test_a_code_line_wider_than_the_chat_is_shown_whole(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(80, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("f10")  # the panel, on a narrow terminal
        assert app.query_one(LatencyPanel).display
        record = await send_and_wait(pilot, "show me code, reply 200 tokens")
        assert CODE_LINE in app.chat.state.messages[-1]["content"]
        assert record.status.value == "ok"
        await pilot.pause(0.2)
        chat_width = app.query_one("#chat-column").size.width
        assert chat_width < len(CODE_LINE) + 10  # the line is wider than its block
        shown = VirtualTerminal(app).text()
        words = " ".join(row[:chat_width] for row in shown.splitlines()).split()
        for word in CODE_LINE.split():
            assert word in words, f"{word!r} is not on screen"
