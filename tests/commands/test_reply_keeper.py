"""ask's ReplyKeeper, step by step (no timers): the prompt first, incomplete saves of the text
so far, one final record replacing them, and nothing written after the final save."""

from __future__ import annotations

import asyncio
from pathlib import Path

from helpers.client import make_request

from tui.commands.ask_saving import ReplyKeeper, chat_title
from tui.engine.chat.events import Finished
from tui.engine.metrics.record import RequestRecord
from tui.engine.store.database import Store


def test_a_reply_saved_as_it_grows_then_once_for_good(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    keeper = ReplyKeeper(store, interval_s=3600)  # the test saves; the timer never fires
    messages = [{"role": "user", "content": "first line of the prompt\nsecond line"}]

    async def go() -> None:
        keeper.open_chat(messages, "m")
        assert store.messages(keeper.chat_id or 0) == messages  # before any request
        keeper.start(make_request(), "h:1", simulated=False)
        saver = asyncio.ensure_future(keeper.run_saver())
        keeper.add("par")
        await keeper.save_progress()
        (draft,) = store.records()
        assert draft["incomplete"] and draft["reply_text"] == "par"
        keeper.add("tial")
        await keeper.save_progress()
        assert store.records()[0]["reply_text"] == "partial"
        await keeper.stop_saver(saver)
        final = RequestRecord(model="m", endpoint_host="h:1", streamed=True)
        keeper.finish(Finished(0.0, final, "partial"))
        keeper.save_progress_now()  # too late: the final record stays the only one

    asyncio.run(go())
    (record,) = store.records()
    assert record["incomplete"] is False and record["reply_text"] == "partial"
    assert store.chats()[0]["title"] == "first line of the prompt"
    assert [m["role"] for m in store.messages(keeper.chat_id or 0)] == ["user", "assistant"]
    store.close()


def test_chat_title() -> None:
    assert chat_title([{"role": "user", "content": "  " + "w" * 80}]) == "w" * 59 + "…"
    assert chat_title([{"role": "system", "content": "x"}]) == "ask"
