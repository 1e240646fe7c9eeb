"""SVG snapshots of the records' screens: the statistics (this chat's model marked, beside the
others, with plotext's histogram) and the chat picker over a real history file. Every figure
and date is fixed: records with known values, chats last used in a fixed past year."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from helpers.app_pilot import Host
from helpers.chat_source import stored_chats

from tui.app.screens.chat_picker import ChatPicker
from tui.app.screens.stats_screen import StatsScreen
from tui.engine.metrics.record import RequestRecord
from tui.engine.metrics.statistics import LatencyRow, group_stats
from tui.engine.store.database import Store

PAST = 1_600_000_000.0  # 2020-09-13: shown as a date, whatever today is


def _rows() -> list[LatencyRow]:
    rows = []
    for n in range(60):
        for model, host, base in (
            ("qwen2.5-7b", "gpu.lan:8000", 180.0),
            ("llama-3b", "cpu:8080", 420.0),
        ):
            rows.append(
                LatencyRow(
                    model,
                    host,
                    PAST + n,
                    n % 17 != 0,
                    None if n % 17 else "timeout",
                    True,
                    False,
                    base + (n * 37 % 23) * 9.0,
                    2400.0,
                    12.0 + n % 5,
                    target_met=n % 4 != 0,
                )
            )
    return rows


def test_statistics_screen(snap_compare: Any) -> None:
    screen = StatsScreen(group_stats(_rows()), ("qwen2.5-7b", "gpu.lan:8000"), "qwen2.5-7b")
    assert snap_compare(Host(screen), terminal_size=(120, 42))


def _history(path: Path) -> None:
    with Store(path) as store:
        for n, (title, model) in enumerate(
            [("why is TTFT slow on long prompts", "qwen2.5-7b"), ("prefix caching", "llama-3b"),
             ("speculative decoding notes", "qwen2.5-7b")]
        ):  # fmt: skip
            chat = store.new_chat(title, model)
            store.add_message(chat, {"role": "user", "content": title})
            record = RequestRecord(model=model, endpoint_host="gpu.lan:8000", streamed=True,
                                   started_at_epoch=PAST + n)  # fmt: skip
            store.save_record(record, "reply", chat_id=chat)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE chats SET created_at_epoch = ?, last_used_epoch = ? + id * 3600",
                   (PAST, PAST))  # fmt: skip


def test_chat_picker(snap_compare: Any, tmp_path: Path) -> None:
    _history(tmp_path / "h.sqlite3")
    store = Store(tmp_path / "h.sqlite3")
    try:
        assert snap_compare(Host(ChatPicker(stored_chats(store), current=None)),
                            terminal_size=(100, 24))  # fmt: skip
    finally:
        store.close()
