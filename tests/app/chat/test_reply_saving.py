"""A reply under way is kept in the history as it grows (tui/app/reply_saving.py): drafts are
saved by their own thread, never from the per-token path; the final save replaces the draft
and nothing comes back after it; a chat whose reply was cut off by a kill reopens with that
reply, marked incomplete.

The saver's steps are driven explicitly (`save_due()`), so nothing here depends on when the
thread wakes; the one test of the thread itself waits for what it writes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.app_pilot import make_app, send, wait_for, wait_ready
from helpers.client import make_request

from tui.app.chat.chat_log import ChatLog
from tui.app.chat.reply_turn import reply_status
from tui.app.untrusted import INCOMPLETE_MARK, saved_reply_notes
from tui.config import ConfigFlags, load_config
from tui.demo import DemoThread
from tui.engine.chat.draft_record import INTERRUPTED
from tui.engine.metrics.record import RequestRecord, RequestStatus
from tui.engine.store.database import Store
from tui.session.chat_state import ChatState
from tui.session.drafts import Draft, ReplyDrafts, draft_record
from tui.session.history import ChatHistory
from tui.session.intake import ReplyIntake
from tui.session.run_state import RunState


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "history.sqlite3") as opened:
        yield opened


def _draft(store: Store, chat_id: int | None = None) -> tuple[Draft, ReplyIntake]:
    intake = ReplyIntake(lambda _text: None)
    record = draft_record(make_request(), "127.0.0.1:1", simulated=True)
    return Draft(chat_id, record, intake, RunState(sent_at=time.perf_counter())), intake


def test_deltas_never_touch_the_store_a_save_step_writes_them_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[str] = []
    save_record = store.save_record

    def counted(*args: Any, **kwargs: Any) -> None:
        writes.append(args[1])
        save_record(*args, **kwargs)

    monkeypatch.setattr(store, "save_record", counted)
    drafts = ReplyDrafts(store, warn=lambda _m: None, interval_s=3600)  # the thread stays idle
    draft, intake = _draft(store)
    drafts.begin(draft)
    for n in range(500):
        intake.feed(f"w{n} ")
    assert writes == []  # 500 deltas: no SQLite
    drafts.save_due()
    drafts.save_due()  # nothing new: no second write
    assert writes == [intake.text()]
    (stored,) = store.records()
    assert stored["incomplete"] and stored["reply_text"] == intake.text()
    assert stored["status"] == RequestStatus.ENDED_EARLY.value
    assert stored["error_kind"] == INTERRUPTED
    drafts.close()


def test_the_final_save_replaces_the_draft_and_no_draft_comes_back(store: Store) -> None:
    drafts = ReplyDrafts(store, warn=lambda _m: None, interval_s=3600)
    chat_id = store.new_chat("t", "m")
    draft, intake = _draft(store, chat_id)
    drafts.begin(draft)
    intake.feed("partial \x1b]52;c;x\x07")
    drafts.save_due()
    final = RequestRecord(model="m", endpoint_host="h", streamed=True)
    history = ChatHistory(store, ChatState.from_config(load_config(ConfigFlags(), env={})), print)
    history.drafts = drafts
    history.reply_done(chat_id, final, "partial \x1b]52;c;x\x07 and the rest", draft=draft)
    intake.feed(" more")
    drafts.save_due()  # the draft is done: nothing is written
    (stored,) = store.records()
    assert stored["id"] == final.id and not stored["incomplete"]
    assert stored["reply_text"] == "partial \x1b]52;c;x\x07 and the rest"  # exact, as it came
    drafts.close()


def test_the_saver_thread_saves_by_itself_and_at_once_when_asked(store: Store) -> None:
    drafts = ReplyDrafts(store, warn=lambda _m: None, interval_s=3600)
    draft, intake = _draft(store)
    drafts.begin(draft)
    intake.feed("arrived")
    drafts.save_soon()  # what a signal handler does
    while not store.records():
        time.sleep(0.01)
    assert store.records()[0]["reply_text"] == "arrived"
    drafts.close()


def test_a_chat_cut_off_by_a_kill_reopens_with_its_reply_marked_incomplete(store: Store) -> None:
    chat_id = store.new_chat("q", "m")
    store.add_message(chat_id, {"role": "user", "content": "tell me"})
    drafts = ReplyDrafts(store, warn=lambda _m: None, interval_s=3600)
    draft, intake = _draft(store, chat_id)
    drafts.begin(draft)
    intake.feed("half a rep")
    drafts.save_due()
    # SIGKILL here: no final save. The next start opens the chat.
    session = ChatState.from_config(load_config(ConfigFlags(), env={}))
    saved = ChatHistory(store, session, print).chat(chat_id)
    assert saved is not None
    assert saved.messages[-1] == {"role": "assistant", "content": "half a rep"}
    assert store.messages(chat_id)[-1] == {"role": "assistant", "content": "half a rep"}
    (note,) = saved_reply_notes(saved, reply_status).values()
    assert note[1].startswith(INCOMPLETE_MARK)
    drafts.close()


@pytest.mark.e2e
async def test_the_app_saves_a_streaming_reply_before_it_ends(
    slow_demo: DemoThread, store: Store
) -> None:
    app = make_app(slow_demo.base_url, store=store, chunk_timeout_ms=30_000)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "reply 3000 tokens")
        chat_id = app.chat.state.chat_id
        assert chat_id is not None
        # The user's message was committed before the request left.
        assert store.messages(chat_id) == [{"role": "user", "content": "reply 3000 tokens"}]
        await wait_for(
            pilot,
            lambda: any(r["incomplete"] and r["reply_text"] for r in store.records()),
            timeout=30,
            what="a draft of the streaming reply",
        )
        assert app.chat_screen.busy  # saved while it streams
        (draft,) = store.records()
        runner = app.chat_screen.turn.current
        assert runner is not None and runner.intake.text().startswith(draft["reply_text"])
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat_screen.busy, what="the cancelled reply")
    (final,) = store.records()  # the draft was replaced
    assert final["status"] == "cancelled" and not final["incomplete"]
    assert final["reply_text"].startswith(draft["reply_text"])


@pytest.mark.e2e
async def test_resume_shows_a_cut_off_reply_marked_incomplete(
    demo: DemoThread, store: Store
) -> None:
    chat_id = store.new_chat("q", "m")
    store.add_message(chat_id, {"role": "user", "content": "tell me"})
    drafts = ReplyDrafts(store, warn=lambda _m: None, interval_s=3600)
    draft, intake = _draft(store, chat_id)
    drafts.begin(draft)
    intake.feed("half a reply that was cut")
    drafts.save_due()
    drafts.close()
    app = make_app(demo.base_url, store=store, resume_chat=chat_id)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: app.chat.state.chat_id == chat_id, what="the resumed chat")
        await pilot.pause(0.1)
        (reply,) = app.query_one(ChatLog).replies()
        assert reply.source == "half a reply that was cut"
        assert str(reply.border_subtitle).startswith(INCOMPLETE_MARK)


def test_a_draft_s_ttft_counts_from_the_engine_s_request_start(store: Store) -> None:
    drafts = ReplyDrafts(store, warn=lambda _m: None, interval_s=3600)
    draft, intake = _draft(store)
    draft.state.started_at = 100.0  # the engine's RequestStarted, after Enter's sent_at
    draft.state.first_token_at = 100.25
    drafts.begin(draft)
    intake.feed("first words")
    drafts.save_due()
    (stored,) = store.records()
    assert stored["ttft_ms"] == pytest.approx(250.0)
    drafts.close()
