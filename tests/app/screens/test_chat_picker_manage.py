"""The chat picker over a real history file: a search finds a chat by any of its messages,
F2 renames the highlighted chat, F8 deletes it after a yes (its records kept), and a long
history is read a page at a time as the highlight goes down."""

from __future__ import annotations

from pathlib import Path

from helpers.app_pilot import Host, wait_for
from helpers.chat_source import stored_chats
from textual.app import App
from textual.widgets import OptionList

from tui.app.screens.chat_picker import PAGE, ChatPicker
from tui.app.screens.chat_title import ChatTitleScreen
from tui.app.screens.confirm import ConfirmScreen
from tui.engine.metrics.record import RequestRecord
from tui.engine.store.database import Store


def _ids(app: App[None]) -> list[str | None]:
    options = app.screen.query_one(OptionList)
    return [options.get_option_at_index(i).id for i in range(options.option_count)]


def _chat(store: Store, title: str, text: str) -> int:
    chat_id = store.new_chat(title, "m")
    store.add_message(chat_id, {"role": "user", "content": text})
    return chat_id


async def test_search_rename_and_delete(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    walrus = _chat(store, "animals", "what do walruses eat?")
    store.save_record(RequestRecord(model="m", endpoint_host="h", streamed=True), "hi", walrus)
    latency = _chat(store, "latency", "why is prefill slow?")  # used last: listed first
    app = Host(ChatPicker(stored_chats(store)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert _ids(app) == [str(latency), str(walrus)]
        await pilot.press(*"walrus")  # in a message, not the title
        await wait_for(pilot, lambda: _ids(app) == [str(walrus)], what="the search")
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatTitleScreen), what="rename")
        await pilot.press(*["backspace"] * 10, *"  Pinnipeds   at lunch ", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatPicker), what="the picker")
        assert store.chats(ids=[walrus])[0]["title"] == "Pinnipeds at lunch"
        row = str(app.screen.query_one(OptionList).get_option_at_index(0).prompt)
        assert row.splitlines()[0].strip() == "Pinnipeds at lunch"
        await pilot.press("f8")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("enter")  # the focused answer is "keep it"
        await wait_for(pilot, lambda: isinstance(app.screen, ChatPicker), what="the picker")
        assert store.chats(ids=[walrus])
        await pilot.press("f8")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatPicker), what="the picker")
        assert store.chats(ids=[walrus]) == []
        assert store.records()[0]["chat_id"] is None  # its latency record stays
    store.close()


async def test_a_long_history_is_read_a_page_at_a_time(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    for n in range(PAGE * 2 + 5):
        _chat(store, f"chat {n}", "hello")
    app = Host(ChatPicker(stored_chats(store)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert len(_ids(app)) == PAGE
        await pilot.press("pagedown", "pagedown", "pagedown", "pagedown", "pagedown", "pagedown")
        await wait_for(pilot, lambda: len(_ids(app)) == PAGE * 2, what="the second page")
        for _ in range(8):
            await pilot.press("pagedown")
        await wait_for(pilot, lambda: len(_ids(app)) == PAGE * 2 + 5, what="the last chats")
    store.close()
