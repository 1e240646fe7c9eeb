"""Keys that terminals deliver: F9 opens the system prompt and saves it (no Ctrl+S, which
XON/XOFF flow control eats), saving keeps each reply's model and figures on screen, and
Ctrl+N says what the new chat keeps: the user's system prompt, never the sample's."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.app_pilot import make_app, replies, send_and_wait, wait_for, wait_ready

from tui.app.screens.chat_screen import ChatScreen
from tui.app.screens.system_prompt import SystemPromptScreen
from tui.demo import DemoThread


def notes_of(app: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every notification's text from now on."""
    said: list[str] = []
    notify = app.notify

    def noted(message: str, **options: Any) -> None:
        said.append(message)
        notify(message, **options)

    monkeypatch.setattr(app, "notify", noted)
    return said


def annotations(app: Any) -> list[tuple[str, str]]:
    """Each reply block's title (with the model) and bottom line (the figures)."""
    return [(str(view.border_title), str(view.border_subtitle)) for view in replies(app)]


async def test_f9_saves_with_f9_and_shows_the_keys() -> None:
    from helpers.app_pilot import Host

    app = Host(SystemPromptScreen("Be brief."))
    async with app.run_test() as pilot:
        await pilot.pause()
        screen = app.screen
        assert "f9 save" in str(screen.query_one("Vertical").border_subtitle)
        await pilot.press(*" Use metric units.", "f9")
        await pilot.pause()
    assert app.result == "Be brief. Use metric units."


async def test_f9_typed_right_after_the_text_saves_the_text() -> None:
    from helpers.app_pilot import Host, one_terminal_read

    app = Host(SystemPromptScreen(""))
    async with app.run_test() as pilot:
        await pilot.pause()
        one_terminal_read(app, "Be brief.\x1b[20~")  # the text and F9 in one terminal read
        await wait_for(pilot, lambda: app.results != [], what="the answer")
    assert app.results == ["Be brief."]


@pytest.mark.e2e
async def test_saving_the_system_prompt_keeps_the_replies_model_and_figures(
    demo: DemoThread,
) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send_and_wait(pilot, "first, reply 6 tokens")
        await send_and_wait(pilot, "second, reply 6 tokens")
        before = annotations(app)
        assert len(before) == 2
        assert all("TTFT" in figures and app.chat.state.model in title for title, figures in before)
        await pilot.press("f9")
        assert isinstance(app.screen, SystemPromptScreen)
        await pilot.press(*"be brief", "f9")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, ChatScreen)
                and app.chat.state.system_prompt == "be brief"
                and len(replies(app)) == 2
            ),
            what="the chat shown again with its system prompt",
        )
        await pilot.pause(0.05)
        assert annotations(app) == before
        # And once more, with the system prompt cleared: the replies move up by one again.
        await pilot.press("f9", "ctrl+a", "ctrl+k", "f9")
        await wait_for(
            pilot,
            lambda: app.chat.state.system_prompt is None and len(replies(app)) == 2,
            what="the system prompt cleared",
        )
        await pilot.pause(0.05)
        assert annotations(app) == before


@pytest.mark.e2e
async def test_ctrl_n_after_the_sample_starts_clean_and_says_so(
    demo: DemoThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        said = notes_of(app, monkeypatch)
        await pilot.press("f6")
        await wait_for(pilot, app.chat.state.awaiting_reply, what="the sample")
        assert app.chat.state.system_prompt
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: not app.chat.state.messages, what="the new chat")
        assert "started clean" in said[-1]
        assert "sample's system prompt is not kept" in said[-1]


@pytest.mark.e2e
async def test_ctrl_n_keeps_the_users_system_prompt_and_says_so(
    demo: DemoThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(demo.base_url)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        said = notes_of(app, monkeypatch)
        await pilot.press("f9", *"be brief", "f9")
        await wait_for(pilot, lambda: app.chat.state.system_prompt == "be brief", what="it set")
        await send_and_wait(pilot, "hello, reply 5 tokens")
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: len(app.chat.state.messages) == 1, what="the new chat")
        assert app.chat.state.messages == [{"role": "system", "content": "be brief"}]
        assert "system prompt is kept" in said[-1]
        assert "tokens)" in said[-1] and "f9" in said[-1]
        # With no system prompt, a new chat is just that.
        await pilot.press("f9", "ctrl+a", "ctrl+k", "f9")
        await wait_for(pilot, lambda: app.chat.state.system_prompt is None, what="it cleared")
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: said[-1] == "new chat", what="the plain notice")
        assert app.chat.state.messages == []
