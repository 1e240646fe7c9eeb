"""The app's way into the kept records: F11 opens the statistics for this chat's model and
endpoint beside the others (with the histogram), and the palette's export writes the open chat
as Markdown or JSON. Through the real app against the demo endpoint and a real history file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.app_pilot import make_app, send_and_wait, wait_for, wait_ready
from textual.widgets import DataTable, Static

from tui.app.screens.stats_screen import StatsScreen
from tui.demo import DemoThread
from tui.engine.metrics.record import RequestRecord
from tui.engine.store.database import Store

pytestmark = pytest.mark.e2e  # the whole app


def _others(store: Store) -> None:
    for n in range(5):
        record = RequestRecord(model="other-model", endpoint_host="gpu.lan:8000", streamed=True)
        record.ttft_ms, record.total_ms, record.tpot_ms = 200.0 + n, 900.0, 9.0
        store.save_record(record, "r")


async def test_f11_shows_this_models_figures_beside_the_others(
    demo: DemoThread, tmp_path: Path
) -> None:
    store = Store(tmp_path / "history.sqlite3")
    _others(store)
    app = make_app(demo.base_url, store=store)
    async with app.run_test(size=(130, 44)) as pilot:
        await wait_ready(pilot)
        record = await send_and_wait(pilot, "hello, reply 5 tokens")
        await pilot.press("f11")
        await wait_for(pilot, lambda: isinstance(app.screen, StatsScreen), what="statistics")
        screen = app.screen
        table = screen.query_one(DataTable)
        first = [str(cell) for cell in table.get_row_at(0)]
        assert first[0] == f"▶ {record.model} (sim)" and first[1] == "demo"
        assert [str(cell) for cell in table.get_row_at(1)][:3] == [
            "other-model", "gpu.lan:8000", "5"
        ]  # fmt: skip
        assert "TTFT  p50" in str(screen.query_one("#stats-current", Static).content)
        plot = screen.query_one("#stats-plot", Static)
        await wait_for(pilot, lambda: "TTFT histogram" in str(plot.content), what="the plot")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, StatsScreen), what="closed")
    store.close()


@pytest.mark.parametrize("as_json", [False, True])
async def test_the_open_chat_exports_to_a_file(
    demo: DemoThread, tmp_path: Path, as_json: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "history.sqlite3")
    app = make_app(demo.base_url, store=store)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_ready(pilot)
        monkeypatch.chdir(tmp_path)  # the palette's export writes to the working folder
        assert app.chat_screen.action_export_chat(int(as_json)) is None  # nothing saved yet
        record = await send_and_wait(pilot, "export me, reply 5 tokens")
        written = app.chat_screen.action_export_chat(int(as_json))
        assert written is not None and written.parent == tmp_path
        text = written.read_text(encoding="utf-8")
        if as_json:
            assert written.suffix == ".json"
            assert json.loads(text) == app.chat.state.messages
        else:
            assert written.name.startswith("firsttoken-chat-") and written.suffix == ".md"
            assert "export me, reply 5 tokens" in text
            assert "> TTFT " in text and record.model in text
    store.close()
