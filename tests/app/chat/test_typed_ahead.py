"""Keys typed ahead land in order, Ctrl+J included: one terminal read carrying text and line
feeds (keys over SSH, a paste-like burst, tmux `send-keys "abc" C-j "def"`) goes through
Textual's own input parser and driver, as a real terminal's bytes do, before the app has
handled any of them."""

from __future__ import annotations

import pytest
from helpers.app_pilot import WidgetsInApp, make_app, one_terminal_read, wait_for, wait_ready

from tui.app.chat.prompt_input import PromptInput
from tui.demo import DemoThread


async def test_ctrl_j_typed_ahead_puts_each_line_break_where_it_was_typed() -> None:
    prompt = PromptInput(id="prompt")
    app = WidgetsInApp(prompt)
    async with app.run_test() as pilot:
        prompt.focus()
        await pilot.pause()
        one_terminal_read(app, "abc\ndef\nghi")
        await wait_for(pilot, lambda: len(prompt.text) == len("abc\ndef\nghi"), what="the keys")
        await pilot.pause()
        assert prompt.text == "abc\ndef\nghi"
        assert prompt.document.lines == ["abc", "def", "ghi"]


@pytest.mark.e2e
async def test_a_burst_with_line_feeds_and_enter_sends_the_lines_in_order(demo: DemoThread) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_ready(pilot)
        # Three lines and Enter in one read; more typing right behind Enter stays in the prompt.
        one_terminal_read(app, "one\ntwo\nthree\rnext")
        await wait_for(
            pilot,
            lambda: (
                any(m.get("role") == "user" for m in app.chat.state.messages)
                and app.query_one(PromptInput).text == "next"
            ),
            what="the message sent and the typing after it",
        )
        sent = [m["content"] for m in app.chat.state.messages if m.get("role") == "user"]
        assert sent == ["one\ntwo\nthree"]
        await wait_for(pilot, lambda: not app.chat_screen.busy, what="the reply")
