"""Pilot tests: the real app against the embedded demo endpoint over real HTTP."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from helpers.app_pilot import (
    FrozenClock,
    demo_endpoint,
    firsttoken_app,
    make_app,
    replies,
    send,
    send_and_wait,
    shown_views,
    wait_for,
    wait_ready,
)
from textual.widgets import Digits, Static

from tui.app.chat.chat_log import ChatLog
from tui.app.chat.collector import STREAMING_THRESHOLDS
from tui.app.chat.message_view import ErrorMessage
from tui.app.panel.latency_panel import _digits_value
from tui.app.panel.ttft_history import format_ms
from tui.demo import DemoThread
from tui.engine.metrics.record import RequestStatus
from tui.engine.store.database import Store

pytestmark = pytest.mark.e2e


def _text(app, selector: str) -> str:
    return str(app.query_one(selector, Static).content)


async def test_type_send_stream_and_metrics_match_the_record(demo: DemoThread, tmp_path: Path):
    store = Store(tmp_path / "history.sqlite3")
    app = make_app(demo.base_url, store=store)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        record = await send_and_wait(pilot, "hello, reply 30 tokens")
        assert record.status == RequestStatus.OK
        reply = replies(app)[-1]
        assert reply.source.strip(), "streamed text is on screen"
        assert app.chat.state.messages[-1] == {"role": "assistant", "content": reply.source}
        assert record.output_tokens == 30
        # The panel shows the record's own figures.
        digits = app.query_one("#ttft", Digits)
        assert digits.value == _digits_value(record.ttft_ms)[0]
        timings = _text(app, "#timings")
        assert format_ms(record.total_ms) in timings
        assert format_ms(record.ttfb_ms) in timings
        assert "30" in timings
        assert format_ms(record.ttft_ms) in reply.border_subtitle
    # History: the user message and the reply, plus the record.
    chat_id = store.chats()[0]["id"]
    roles = [m["role"] for m in store.messages(chat_id)]
    assert roles == ["user", "assistant"]
    assert store.records()[0]["id"] == record.id
    store.close()


async def test_switches_change_what_the_endpoint_receives(demo: DemoThread):
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("f6")  # the bloated sample: far over the 6,000-token budget
        await wait_for(pilot, lambda: len(app.chat.state.messages) > 10, what="sample")
        full = len(app.chat.state.messages) + 1
        assert app.chat.state.trim_enabled
        await send_and_wait(pilot, "trimmed question")
        trimmed = demo.requests[-1]
        assert trimmed["message_count"] < full
        assert trimmed["stream"] is True

        await pilot.press("ctrl+t")  # trimming off
        assert not app.chat.state.trim_enabled
        sent = len(app.chat.state.messages) + 1
        await send_and_wait(pilot, "untrimmed question")
        untrimmed = demo.requests[-1]
        assert untrimmed["message_count"] == sent
        assert untrimmed["prompt_tokens"] > trimmed["prompt_tokens"]

        await pilot.press("f3")  # streaming off
        record = await send_and_wait(pilot, "a whole body, please")
        assert demo.requests[-1]["stream"] is False
        assert record.streamed is False
        assert replies(app)[-1].source.strip()


async def test_escape_keeps_the_partial_reply_marked_cancelled(slow_demo: DemoThread):
    # A generous chunk timeout: a loaded test machine must not turn this into a stall.
    app = make_app(slow_demo.base_url, chunk_timeout_ms=30_000)
    thresholds_before = gc.get_threshold()
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "reply 3000 tokens")
        await wait_for(
            pilot,
            lambda: (
                app.chat_screen.turn.current is not None
                and app.chat_screen.turn.current.state.tokens >= 5
            ),
            timeout=30,
            what="the first tokens",
        )
        # No full garbage collection while it streams (it would stop the UI loop).
        assert gc.get_threshold() == STREAMING_THRESHOLDS
        # Typing stays possible while the reply streams.
        await pilot.press(*"next")
        assert app.query_one("#prompt").text == "next"
        await pilot.press("escape")
        await wait_for(
            pilot, lambda: not app.chat_screen.busy, timeout=30, what="the cancelled end"
        )
        assert app.chat_screen.last_record is not None
        assert app.chat_screen.last_record.status == RequestStatus.CANCELLED
        reply = replies(app)[-1]
        assert reply.has_class("-cancelled")
        assert "cancelled" in reply.border_subtitle
        assert reply.source.strip()
        assert app.chat.state.messages[-1]["role"] == "assistant"
        assert len(reply.source.split()) < 3000
        assert gc.get_threshold() == thresholds_before  # back once the reply is done


async def test_error_endpoint_shows_the_error_block(demo: DemoThread):
    app = make_app(f"{demo.root_url}/fault/500/v1", max_retries=0)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        record = await send_and_wait(pilot, "will this work?")
        assert record.status == RequestStatus.ERROR
        errors = app.query(ErrorMessage)
        assert len(errors) == 1
        hint = str(errors.first().query_one(Static).content)
        assert "500" in hint
        assert not replies(app), "no empty reply block is left behind"
        # The app keeps working: the next send makes another attempt.
        await send_and_wait(pilot, "and again?")
        assert len(app.query(ErrorMessage)) == 2


async def test_after_an_error_the_next_request_works(demo: DemoThread):
    # 429x2: the warm-up's GET /models and the first chat request are rate limited, then the
    # endpoint answers normally.
    app = make_app(f"{demo.root_url}/fault/429x2/v1", max_retries=0)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        first = await send_and_wait(pilot, "first")
        assert first.status == RequestStatus.ERROR
        assert first.error_kind == "rate_limited"
        assert "rate limited" in str(app.query_one(ErrorMessage).query_one(Static).content)
        second = await send_and_wait(pilot, "second, reply 12 tokens")
        assert second.status == RequestStatus.OK
        assert replies(app)[-1].source.strip()


async def test_sample_conversation_marks_dropped_messages(demo: DemoThread):
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("f6")
        await wait_for(pilot, lambda: bool(app.query(".-dropped")), what="dropped markers")
        dropped = [v for v in shown_views(app) if v.has_class("-dropped")]
        assert dropped and all("dropped" in v.border_subtitle for v in dropped)
        assert app.chat_screen.preview is not None
        assert len(dropped) == len(app.chat_screen.preview.dropped_indices)
        note = _text(app, "#trim-note")
        assert f"{len(dropped)} messages" in note and "tokens dropped" in note
        # Toggling trimming updates the preview at once.
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not app.query(".-dropped")
        assert "trimming off" in _text(app, "#trim-note")
        # A bigger budget drops less.
        await pilot.press("ctrl+t")
        await pilot.pause()
        before = len(app.query(".-dropped"))
        for _ in range(4):
            await pilot.press("ctrl+up")
        await pilot.pause()
        assert len(app.query(".-dropped")) < before


async def test_prompt_history_recall_and_newline(demo: DemoThread):
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "first prompt")
        await send_and_wait(pilot, "second prompt")
        prompt = app.query_one("#prompt")
        await pilot.press("up")
        assert prompt.text == "second prompt"
        await pilot.press("up")
        assert prompt.text == "first prompt"
        await pilot.press("down", "down")
        assert prompt.text == ""
        await pilot.press("a", "ctrl+j", "b")
        assert prompt.text == "a\nb"


async def test_narrow_terminal_collapses_the_panel(demo: DemoThread):
    app = make_app(demo.base_url)
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        panel = app.query_one("#panel")
        assert not panel.display
        await pilot.press("f10")
        assert panel.display


async def test_resizing_collapses_and_restores_the_panel(demo: DemoThread):
    """The width rule follows each resize, judged by the size after it, not before."""
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 30)) as pilot:
        await pilot.pause()
        panel = app.query_one("#panel")
        assert panel.display
        await pilot.resize_terminal(80, 30)
        await pilot.pause()
        assert not panel.display
        await pilot.resize_terminal(130, 30)
        await pilot.pause()
        assert panel.display
        await pilot.press("f10")  # the user's choice beats the width rule from now on
        await pilot.resize_terminal(140, 30)
        await pilot.pause()
        assert not panel.display


async def test_palette_lists_every_command(demo: DemoThread):
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        titles = {command.title for command in app.get_system_commands(app.screen)}
        for expected in (
            "Send",
            "Cancel generation",
            "Toggle trimming",
            "Toggle streaming",
            "Retry last request",
            "New chat",
            "Switch model",
            "Switch theme",
            "Copy last reply",
            "Copy last code block",
            "Set system prompt",
            "Help",
        ):
            assert expected in titles
        await pilot.pause()


async def test_help_model_picker_and_system_prompt(demo: DemoThread):
    from tui.app.screens.help import HelpScreen
    from tui.app.screens.model_picker import ModelPicker
    from tui.app.screens.system_prompt import SystemPromptScreen

    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)

        await pilot.press("f2")
        assert isinstance(app.screen, ModelPicker)
        app.screen.dismiss("another-model")
        await pilot.pause()
        assert app.chat.state.model == "another-model"
        await send_and_wait(pilot, "which model?")
        assert demo.requests[-1]["model"] == "another-model"

        await pilot.press("f9")
        assert isinstance(app.screen, SystemPromptScreen)
        app.screen.dismiss("You are terse.")
        await wait_for(
            pilot,
            lambda: (
                app.chat.state.messages[:1] == [{"role": "system", "content": "You are terse."}]
            ),
            what="the system prompt",
        )
        await send_and_wait(pilot, "hi")
        assert demo.requests[-1]["messages"][0]["content"] == "You are terse."


async def test_retry_and_new_chat(demo: DemoThread):
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "once, reply 8 tokens")
        count = len(demo.requests)
        before = app.chat_screen.last_record
        await pilot.press("f5")
        await wait_for(
            pilot, lambda: app.chat_screen.last_record is not before and not app.chat_screen.busy
        )
        assert len(demo.requests) == count + 1
        assert [m["role"] for m in app.chat.state.messages] == ["user", "assistant"]
        assert len(replies(app)) == 1
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.chat.state.messages == []
        assert not replies(app)


async def test_opens_with_a_messages_file_conversation(demo: DemoThread):
    app = make_app(demo.base_url)
    app.chat.state.messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Earlier question"},
        {"role": "assistant", "content": "Earlier answer"},
    ]
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        assert len(shown_views(app)) == 3
        await send_and_wait(pilot, "and now?")
        assert demo.requests[-1]["message_count"] == 4


async def test_waiting_counter_changes_colour_and_esc_cancels_before_any_token(
    demo: DemoThread, monkeypatch: pytest.MonkeyPatch
):
    # The endpoint accepts and never answers. The panel's clock is frozen and moved past
    # each threshold in turn: its 10 Hz timer shows each colour, however loaded the machine.
    # One verdict: a short question's class target (500 ms) is the ok/warn boundary, not
    # ttft_warn_ms, which only colours a request no class covers.
    app = make_app(
        f"{demo.root_url}/fault/hang/v1",
        ttft_warn_ms=150.0,
        ttft_error_ms=1500.0,
        timeout_seconds=60,
    )
    async with app.run_test(size=(130, 40)) as pilot:
        # /models hangs too
        await wait_for(pilot, lambda: app.chat.engine.client is not None, what="the engine")
        await send(pilot, "anyone?")
        turn = app.chat_screen.turn
        await wait_for(
            pilot,
            lambda: turn.current is not None and turn.current.state.started_at is not None,
            what="the request under way",
        )
        clock = FrozenClock(monkeypatch)
        started = turn.current.state.started_at
        digits = app.query_one("#ttft", Digits)
        clock.set(started + 0.2)  # past ttft_warn_ms, within the class target
        await wait_for(pilot, lambda: "short_qa ≤ 500 ms" in _text(app, "#ttft-note"))
        assert digits.has_class("-ok") and "missed" not in _text(app, "#ttft-note")
        clock.set(started + 0.6)
        await wait_for(pilot, lambda: digits.has_class("-warn"), what="the warn colour")
        assert "✗ missed" in _text(app, "#ttft-note")  # the colour and the verdict agree
        clock.set(started + 1.6)
        await wait_for(pilot, lambda: digits.has_class("-error"), what="the error colour")
        assert "waiting" in _text(app, "#ttft-label")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat_screen.busy, what="the cancel")
        assert app.chat_screen.last_record is not None
        assert app.chat_screen.last_record.status == RequestStatus.CANCELLED
        reply = replies(app)[-1]
        assert reply.has_class("-cancelled")
        assert [m["role"] for m in app.chat.state.messages] == ["user"]


async def test_copy_last_reply_and_its_code_block(demo: DemoThread):
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "some code please, reply 90 tokens")
        reply = app.chat.state.messages[-1]["content"]
        await pilot.press("f7")
        assert app.clipboard == reply
        assert "```" in reply, "the demo reply carries a code fence at this length"
        await pilot.press("f8")
        assert app.clipboard and "```" not in app.clipboard
        assert app.clipboard in reply


async def test_theme_choice_is_remembered_and_a_broken_theme_file_is_reported(
    demo: DemoThread, isolated_home: Path
):
    from tui import locations
    from tui.app.preferences import Preferences

    themes = locations.user_themes_dir()
    themes.mkdir(parents=True)
    (themes / "broken.toml").write_text("name = 'broken'\nprimary = 'not a colour'\n")
    base = make_app(demo.base_url)
    app = firsttoken_app(base.config, demo_endpoint(demo), remember=True)
    async with app.run_test(size=(130, 40)) as pilot:
        await pilot.pause(0.2)
        messages = [n.message for n in app._notifications]
        assert any("broken.toml" in m for m in messages), messages
        app.theme = "firsttoken-light"
        await pilot.pause()
    assert Preferences.load().theme == "firsttoken-light"


async def test_sent_prompts_reach_the_history_file(demo: DemoThread, isolated_home: Path):
    from tui.app.preferences import PromptHistory

    base = make_app(demo.base_url)
    app = firsttoken_app(base.config, demo_endpoint(demo), remember=True)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "kept, reply 5 tokens")
        # Written after Enter's frame, while the app runs.
        assert PromptHistory().entries == ["kept, reply 5 tokens"]
        await pilot.press(*"quit at once", "enter")
    # A prompt sent as the app closes is kept too (written at the latest on unmount).
    assert PromptHistory().entries == ["kept, reply 5 tokens", "quit at once"]


@pytest.mark.parametrize(
    ("fault", "status", "hint", "partial"),
    [
        ("stall-5000", RequestStatus.STALLED, "stalled", True),
        ("early", RequestStatus.ENDED_EARLY, "without a finish reason", True),
        ("context", RequestStatus.ERROR, "context length", False),
        ("401", RequestStatus.ERROR, "key was refused", False),
    ],
)
async def test_faults_show_the_engine_hint_and_keep_partial_text(
    demo: DemoThread, fault: str, status: RequestStatus, hint: str, partial: bool
):
    app = make_app(
        f"{demo.root_url}/fault/{fault}/v1",
        max_retries=0,
        chunk_timeout_ms=300,
        stall_timeout_ms=600,  # a longer gap than chunk_timeout_ms is a pause; this one, a stall
    )
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: app.chat.engine.client is not None, what="the engine")
        record = await send_and_wait(pilot, "hello, reply 40 tokens")
        assert record.status == status
        error = app.query(ErrorMessage).last()
        assert hint in str(error.query_one(Static).content)
        shown = replies(app)
        if partial:
            assert shown[-1].source.strip()
            assert shown[-1].has_class(f"-{status.value}")
        else:
            assert not shown


async def test_sample_sent_as_is_with_trimming_off_then_on(demo: DemoThread):
    """The demo flow: F6, Enter with trimming off, then on; the endpoint sees both prompts."""
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("f6")
        await wait_for(pilot, lambda: app.chat.state.awaiting_reply(), what="sample loaded")
        sample_size = len(app.chat.state.messages)
        await pilot.press("ctrl+t")  # trimming off
        app.query_one("#prompt").focus()
        await pilot.press("enter")  # an empty Enter sends the loaded conversation as it is
        await wait_for(
            pilot,
            lambda: app.chat_screen.last_record is not None and not app.chat_screen.busy,
            what="reply",
        )
        untrimmed = demo.requests[-1]
        await pilot.press("ctrl+t")  # trimming on
        await pilot.press("f5")  # send it again
        await wait_for(
            pilot,
            lambda: len(demo.requests) >= 2 and not app.chat_screen.busy,
            what="trimmed reply",
        )
        await wait_for(
            pilot, lambda: app.chat_screen.last_record.trim_enabled, what="trimmed record"
        )
        trimmed = demo.requests[-1]
    assert untrimmed["message_count"] == sample_size
    assert trimmed["message_count"] < sample_size
    assert trimmed["prompt_tokens"] < untrimmed["prompt_tokens"]


async def test_the_chat_follows_the_stream_until_the_user_scrolls_up(slow_demo: DemoThread):
    app = make_app(slow_demo.base_url, chunk_timeout_ms=30_000)
    async with app.run_test(size=(90, 24)) as pilot:
        await wait_ready(pilot)
        chat = app.query_one(ChatLog)
        await send(pilot, "reply 3000 tokens")

        def at_bottom() -> bool:
            return chat.max_scroll_y > 0 and chat.scroll_y >= chat.max_scroll_y - 1

        await wait_for(
            pilot, lambda: chat.max_scroll_y > 5, timeout=30, what="an overflowing reply"
        )
        grown = chat.max_scroll_y
        await wait_for(pilot, lambda: chat.max_scroll_y > grown + 3, timeout=30, what="more lines")
        await wait_for(pilot, at_bottom, timeout=5, what="the view at the newest line")
        assert chat.is_anchored

        chat.scroll_home(animate=False)  # the user scrolls up: the anchor lets go
        await pilot.pause(0.05)
        held = chat.scroll_y
        grown = chat.max_scroll_y
        await wait_for(pilot, lambda: chat.max_scroll_y > grown + 3, timeout=30, what="more lines")
        assert chat.scroll_y == held  # not dragged down while reading

        chat.scroll_end(animate=False)  # back to the end: following again
        grown = chat.max_scroll_y
        await wait_for(pilot, lambda: chat.max_scroll_y > grown + 3, timeout=30, what="more lines")
        await wait_for(pilot, at_bottom, timeout=5, what="the view following again")
        await pilot.press("escape")
        await wait_for(
            pilot, lambda: not app.chat_screen.busy, timeout=30, what="the cancelled end"
        )


async def test_a_screen_opened_while_the_preview_is_pending_does_not_break_it(demo: DemoThread):
    # The trim preview is debounced; its timer may fire while a modal screen is on top.
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        app.query_one("#prompt").focus()
        await pilot.press(*"hello there", "f1")
        await pilot.pause(0.4)  # past the debounce, with the help screen open
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert app.chat_screen.preview is not None and app.chat_screen.preview.tokens_after > 0
