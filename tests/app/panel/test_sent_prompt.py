"""The panel's "last sent" says what the last request carried whenever the app knows it: the
server's usage, else the server's own count, else the app's count (≈); "—" only when nothing
was sent or counted."""

from __future__ import annotations

import pytest
from helpers.app_pilot import make_app, send, wait_for, wait_ready
from textual.widgets import Static

from tui.app.panel.sent_prompt import SentPrompt, sent_prompt
from tui.demo import DemoThread
from tui.engine.metrics.record import RequestRecord, RequestStatus


def record(**figures: object) -> RequestRecord:
    made = RequestRecord(model="m", endpoint_host="h", streamed=True)
    for name, value in figures.items():
        setattr(made, name, value)
    return made


def test_the_best_count_of_the_prompt_sent() -> None:
    answered = {"ttfb_ms": 12.0, "prompt_tokens_estimated": 90, "tokens_after": 88}
    assert sent_prompt(record(**answered, prompt_tokens_usage=91)) == SentPrompt(91, "usage", True)
    # Usage wins, and where it contradicts what the app counted the gap is said.
    assert sent_prompt(record(**answered, prompt_tokens_usage=60)) == SentPrompt(
        60, "usage; counted ≈90", True
    )
    templated = record(**answered, prompt_tokens_server=93, prompt_tokens_source="server")
    assert sent_prompt(templated) == SentPrompt(93, "server", True)
    # The server's count of the texts, its template's tokens the local recipe's: an estimate.
    texts = record(**answered, prompt_tokens_server=93, prompt_tokens_source="server_text")
    assert sent_prompt(texts) == SentPrompt(93, "server", False)
    assert sent_prompt(record(**answered)) == SentPrompt(90, "local", False)
    assert sent_prompt(record(ttfb_ms=12.0, tokens_after=88)) == SentPrompt(88, "local", False)
    assert sent_prompt(record(prompt_tokens_estimated=90)) is None  # never answered
    assert sent_prompt(None) is None


@pytest.mark.e2e
async def test_a_cancelled_reply_still_says_what_was_sent(slow_demo: DemoThread) -> None:
    app = make_app(slow_demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "hello, reply 400 tokens")
        turn = app.chat_screen.turn
        assert turn is not None
        await wait_for(pilot, lambda: turn.current is not None and turn.current.state.tokens >= 3)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat_screen.busy, what="the cancelled reply")
        last = app.chat_screen.last_record
        assert last is not None and last.status is RequestStatus.CANCELLED
        assert last.prompt_tokens_usage is None  # the stream ended before its usage
        await pilot.pause(0.1)
        line = str(app.query_one("#prompt-tokens", Static).content)
        assert line.startswith("last sent ≈") and "tokens (local)" in line, line
