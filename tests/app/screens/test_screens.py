"""The modal screens, driven by the keyboard through a tiny host app."""

from __future__ import annotations

from helpers.app_pilot import Host
from helpers.chat_source import ListedChats
from textual.app import App
from textual.widgets import Input, Label, OptionList, TextArea

from tui.app.screens.chat_picker import ChatPicker, when
from tui.app.screens.help import HelpScreen
from tui.app.screens.model_picker import ModelPicker
from tui.app.screens.system_prompt import SystemPromptScreen

MODELS = ["gpt-4o-mini", "gpt-4o", "qwen-7b-chat", "llama-3.1-8b-instruct"]


def _option_ids(app: App[None]) -> list[str | None]:
    """The options' ids; a model picker's as the model each stands for (what choosing it
    returns: its ids are places in its list)."""
    options = app.screen.query_one(OptionList)
    ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
    screen = app.screen
    if isinstance(screen, ModelPicker):
        return [screen.choice_for(id) if id is not None else None for id in ids]
    return ids


async def test_help_lists_every_key_and_escape_closes() -> None:
    keys = [
        ("Enter", "Send", "Chat"),
        ("Esc", "Cancel the reply", "Chat"),
        ("Ctrl+T", "Toggle trimming", "Latency"),
        ("[F1]", "Help (markup-looking keys stay literal)", "App"),
    ]
    app = Host(HelpScreen(keys))
    async with app.run_test() as pilot:
        await pilot.pause()
        texts = [str(label.render()) for label in app.screen.query(Label)]
        for key, description, group in keys:
            assert key in texts and description in texts and group in texts
        assert texts.count("Chat") == 1
        # Then what the panel's figures mean, in the README's words.
        assert "What the figures mean" in texts
        assert any(text.startswith("time per output token after the first") for text in texts)
        assert texts.index("What the figures mean") > texts.index("App")
        await pilot.press("escape")
        await pilot.pause()
        assert app.result is None
        assert not isinstance(app.screen, HelpScreen)


async def test_model_picker_escape_dismisses_none() -> None:
    app = Host(ModelPicker(MODELS, "qwen-7b-chat"))
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.result is None


async def test_model_picker_starts_on_current_and_enter_chooses_it() -> None:
    app = Host(ModelPicker(MODELS, "qwen-7b-chat"))
    async with app.run_test() as pilot:
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        assert options.highlighted == MODELS.index("qwen-7b-chat")
        assert app.screen.focused is app.screen.query_one(Input)
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.result == "llama-3.1-8b-instruct"


async def test_model_picker_filter_narrows_options() -> None:
    app = Host(ModelPicker(MODELS, "qwen-7b-chat"))
    async with app.run_test() as pilot:
        await pilot.pause()
        assert _option_ids(app) == MODELS
        await pilot.press(*"4O")
        await pilot.pause()
        assert _option_ids(app)[:2] == ["gpt-4o-mini", "gpt-4o"]
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.result == "gpt-4o"


async def test_model_picker_accepts_a_typed_name() -> None:
    app = Host(ModelPicker(MODELS, "gpt-4o"))
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press(*"my-local")
        await pilot.pause()
        assert len(_option_ids(app)) == 1
        await pilot.press("enter")
        await pilot.pause()
        assert app.result == "my-local"


async def test_model_picker_lists_the_current_model_even_if_unlisted() -> None:
    app = Host(ModelPicker(["a", "b", "a"], "custom"))
    async with app.run_test() as pilot:
        await pilot.pause()
        assert _option_ids(app) == ["custom", "a", "b"]
        await pilot.click(OptionList, offset=(4, 1))
        await pilot.pause()
        assert app.result == "a"


async def test_model_picker_shows_an_id_with_controls_inert_and_chooses_it_exactly() -> None:
    hostile = "evil\x1b]52;c;Zm9v\x07model"
    app = Host(ModelPicker(["good", hostile], "good"))
    async with app.run_test() as pilot:
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        label = str(options.get_option_at_index(1).prompt)
        assert "\x1b" not in label and "\x07" not in label and "evil" in label
        await pilot.press(*"evil", "enter")
        await pilot.pause()
        assert app.result == hostile


async def test_system_prompt_ctrl_s_saves() -> None:
    app = Host(SystemPromptScreen("Be brief."))
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.screen.query_one(TextArea).text == "Be brief."
        await pilot.press(*" Use metric units.")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.result == "Be brief. Use metric units."


async def test_system_prompt_escape_cancels_and_empty_clears() -> None:
    app = Host(SystemPromptScreen("Be brief."))
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("x", "escape")
        await pilot.pause()
        assert app.result is None

    app = Host(SystemPromptScreen("Be brief."))
    async with app.run_test() as pilot:
        await pilot.pause()
        app.screen.query_one(TextArea).text = "  \n"
        await pilot.click("#save")
        await pilot.pause()
        assert app.result == ""


async def test_system_prompt_starts_empty_without_a_prompt() -> None:
    app = Host(SystemPromptScreen(None))
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.screen.query_one(TextArea).text == ""
        await pilot.press("escape")
        await pilot.pause()
        assert app.result is None


CHATS = [  # as Store.chats() gives them: newest first
    {
        "id": 7,
        "title": "why is\nprefill slow?",
        "model": "qwen-7b",
        "created_at_epoch": 3e9,
        "message_count": 4,
    },
    {"id": 3, "title": "hello", "model": "gpt-4o", "created_at_epoch": 2e9, "message_count": 1},
    {"id": 1, "title": "x" * 200, "model": "gpt-4o", "created_at_epoch": 1e9, "message_count": 2},
]


async def test_chat_picker_starts_on_the_current_chat_and_filters_by_title_or_model() -> None:
    app = Host(ChatPicker(ListedChats(CHATS), current=3))
    async with app.run_test() as pilot:
        await pilot.pause()
        assert _option_ids(app) == ["7", "3", "1"]
        assert app.screen.query_one(OptionList).highlighted == 1
        await pilot.press(*"PREFILL")
        await pilot.pause(0.4)  # the search runs once the typing pauses
        assert _option_ids(app) == ["7"]
        await pilot.press(*["backspace"] * 7, *"gpt-4o")
        await pilot.pause(0.4)
        assert _option_ids(app) == ["3", "1"]
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.result == 1


async def test_chat_picker_shows_each_chat_on_two_short_lines_and_escape_cancels() -> None:
    app = Host(ChatPicker(ListedChats(CHATS)))
    async with app.run_test() as pilot:
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        first, _, long = (str(options.get_option_at_index(i).prompt) for i in range(3))
        assert first.splitlines()[0].strip() == "why is prefill slow?"
        assert "qwen-7b · 4 messages" in first.splitlines()[1]
        assert len(long.splitlines()[0]) < 70 and long.splitlines()[0].endswith("…")
        await pilot.press("escape")
        await pilot.pause()
        assert app.result is None


def test_when_says_the_day_and_the_time_or_the_date() -> None:
    import time

    now = time.mktime((2026, 11, 30, 15, 0, 0, 0, 0, -1))
    assert when(now - 3600, now) == "today 14:00"
    assert when(now - 86400, now) == "yesterday 15:00"
    assert when(now - 3 * 86400, now) == "Nov 27 15:00"
    assert when(now - 400 * 86400, now) == time.strftime(
        "%Y-%m-%d", time.localtime(now - 400 * 86400)
    )


async def test_a_picker_answers_once_however_fast_the_keys_come() -> None:
    """Enter typed twice before the picker is off the stack (the keys read in one go) must
    answer once: a second dismiss would pop the chat screen itself and end the app."""
    app = Host(ChatPicker(ListedChats(CHATS), current=3))
    async with app.run_test() as pilot:
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, ChatPicker)
        picker._submit()
        picker._submit()  # the second Enter, still addressed to the picker
        await pilot.pause()
        assert app.results == [3]
        assert not isinstance(app.screen, ChatPicker) and app.screen.is_active


async def test_an_answered_modal_never_closes_the_one_opened_after_it() -> None:
    app = Host(ChatPicker(ListedChats(CHATS)))
    async with app.run_test() as pilot:
        await pilot.pause()
        picker = app.screen
        await pilot.press("escape")
        help_screen = HelpScreen([("f1", "help", "app")])
        app.push_screen(help_screen)
        await pilot.pause()
        picker.dismiss(None)  # late: the picker answered already
        await pilot.pause()
        assert app.screen is help_screen
