"""The chat picker lists the app's chats, the last used first, each with its date and endpoint;
the one-shot `ask` runs stay out until Ctrl+G asks for them. Fed from a real history file."""

from __future__ import annotations

from pathlib import Path

from helpers.app_pilot import Host
from helpers.chat_source import stored_chats
from textual.app import App
from textual.containers import Vertical
from textual.widgets import OptionList

from tui.app.screens.chat_picker import ChatPicker
from tui.engine.metrics.record import RequestRecord
from tui.engine.store.database import ASK_CHAT, Store


def _ids(app: App[None]) -> list[str | None]:
    options = app.screen.query_one(OptionList)
    return [options.get_option_at_index(i).id for i in range(options.option_count)]


def _rows(app: App[None]) -> list[str]:
    options = app.screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def _history(path: Path) -> tuple[int, int, list[int]]:
    """App chat A, ask runs, app chat B, then A used again: A is the last used."""
    with Store(path) as store:
        a = store.new_chat("chat a", "model-a")
        store.save_record(
            RequestRecord(model="model-a2", endpoint_host="api.example.com:443", streamed=True),
            "reply",
            chat_id=a,
        )
        asks = [store.new_chat(f"one-shot {n}", "m", kind=ASK_CHAT) for n in range(3)]
        b = store.new_chat("chat b", "model-b")
        # An endpoint stored raw by an older release: its credentials never reach the screen.
        store.save_record(
            RequestRecord(
                model="model-b",
                endpoint_host="http://usr:pwLEAKA@h:99999/v1?key=qsLEAKA",
                streamed=True,
            ),
            "reply",
            chat_id=b,
        )
        store.add_message(a, {"role": "user", "content": "back in a"})
    return a, b, asks


async def test_the_picker_lists_app_chats_last_used_first_with_date_and_endpoint(
    tmp_path: Path,
) -> None:
    a, b, asks = _history(tmp_path / "h.sqlite3")
    store = Store(tmp_path / "h.sqlite3")
    app = Host(ChatPicker(stored_chats(store), current=b))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert _ids(app) == [str(a), str(b)]
        first, second = _rows(app)
        details = first.splitlines()[1]
        assert details.strip().startswith("today ")
        assert "api.example.com:443" in details and "model-a2" in details
        assert "LEAKA" not in second and "model-b" in second
        subtitle = str(app.screen.query_one(Vertical).border_subtitle)
        assert "ctrl+g shows 3 ask runs" in subtitle

        await pilot.press("ctrl+g")
        await pilot.pause()
        assert _ids(app) == [str(a), str(b), *(str(n) for n in reversed(asks))]
        assert _rows(app)[-1].splitlines()[1].endswith("ask run")
        assert "ctrl+g hides the 3 ask runs" in str(app.screen.query_one(Vertical).border_subtitle)
        await pilot.press(*"one-shot 1")
        await pilot.pause(0.4)  # the search runs once the typing pauses
        assert _ids(app) == [str(asks[1])]
        await pilot.press("ctrl+g")  # hidden again, the filter kept
        await pilot.pause(0.4)
        assert _ids(app) == [None] and "no chat holds that" in _rows(app)[0]
    store.close()


async def test_only_ask_runs_saved_says_how_to_see_them(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    run = store.new_chat("one-shot", "m", kind=ASK_CHAT)
    app = Host(ChatPicker(stored_chats(store)))
    async with app.run_test() as pilot:
        await pilot.pause()
        (row,) = _rows(app)
        assert "ctrl+g shows the ask runs" in row
        await pilot.press("enter")  # the hint is not a chat
        await pilot.pause()
        assert isinstance(app.screen, ChatPicker)
        await pilot.press("ctrl+g", "enter")
        await pilot.pause()
        assert app.result == run
