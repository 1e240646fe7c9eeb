"""One turn through the session layer headless (as `ask` takes it), against the demo endpoint
over real HTTP: the chat and its messages saved before the request leaves, the reply saved as
a draft while it streams, one final record replacing the draft, the reply added to the chat."""

from __future__ import annotations

import asyncio
from contextlib import nullcontext
from pathlib import Path

from helpers.client import demo

from tui.config import ConfigFlags, load_config
from tui.demo import DemoThread
from tui.engine.store.database import Store
from tui.engine.tokens.counter import get_counter
from tui.session.chat import Chat
from tui.session.chat_state import ChatState
from tui.session.engine_link import EngineLink
from tui.session.history import ChatHistory, chat_title
from tui.session.turn import QuietSink
from tui.wiring import Endpoint, client_for


class Collected(QuietSink):
    def __init__(self) -> None:
        self.shown: list[str] = []

    def text(self, shown: str) -> None:
        self.shown.append(shown)


def _chat(demo: DemoThread, store: Store, messages: list[dict[str, str]]) -> Chat:
    config = load_config(ConfigFlags(base_url=demo.base_url), env={})
    endpoint = Endpoint(base_url=demo.base_url, api_key="demo", simulated=True)
    state = ChatState.from_config(config, messages)
    engine = EngineLink(lambda: nullcontext(endpoint), [config.model])
    counter = get_counter(config.model)
    engine.client, engine.counter, engine.connected = client_for(config, endpoint), counter, True
    return Chat(state, ChatHistory(store, state, warn=print), engine)


def test_a_turn_is_saved_before_it_is_sent_as_it_streams_and_once_at_its_end(
    tmp_path: Path,
) -> None:
    with demo("cpu-small") as server:  # 60 tokens/s: still streaming after five tokens
        _one_turn(server, tmp_path)


def _one_turn(demo: DemoThread, tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    messages = [{"role": "user", "content": "first line of the prompt\nreply 40 tokens"}]
    chat = _chat(demo, store, messages)
    chat.history.past_changed(create=True)
    chat_id = chat.state.chat_id
    assert chat_id is not None and store.messages(chat_id) == messages  # before any request
    sink = Collected()

    async def go() -> str:
        turn = chat.begin(sink, chat.request(count_later=True))
        assert turn.draft is not None
        while turn.state.tokens < 5:  # the reply is under way: one explicit draft save
            await asyncio.sleep(0.01)
        assert chat.history.drafts is not None
        chat.history.drafts.save_due()
        (draft,) = store.records()
        assert draft["incomplete"] and turn.intake.text().startswith(draft["reply_text"])
        finished = await turn.outcome()
        await chat.settle(turn, finished)
        chat.file(turn, finished)
        chat.file(turn, finished)  # a second time does nothing
        await chat.engine.close()
        return finished.text

    text = asyncio.run(go())
    chat.history.close()
    (record,) = store.records()  # the final record replaced the draft, and nothing came back
    assert record["incomplete"] is False and record["reply_text"] == text
    assert "".join(sink.shown) == text  # the demo's reply holds no control characters
    assert record["prompt_tokens_estimated"] is not None  # counted after the reply
    assert store.chats()[0]["title"] == "first line of the prompt"
    assert [m["role"] for m in store.messages(chat_id)] == ["user", "assistant"]
    store.close()


def test_chat_title() -> None:
    assert chat_title([{"role": "user", "content": "  " + "w" * 80}]) == "w" * 59 + "…"
    assert chat_title([{"role": "system", "content": "x"}]) == "chat"
