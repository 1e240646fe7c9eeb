"""The statistics screen in a real terminal (tmux): F11 and Ctrl+\\ reach the app, the screen
shows the kept records' figures for this chat's model with the histogram, Esc goes back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.tmux_app import Tmux

from tui.demo import DemoThread
from tui.engine.chat.client import endpoint_host
from tui.engine.metrics.record import RequestRecord
from tui.engine.store.database import Store
from tui.locations import history_db_path

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        shutil.which("tmux") is None,
        reason="tmux is not installed (needed to drive a real terminal)",
    ),
]
MODEL = "demo-cpu-small"


def test_f11_and_ctrl_backslash_open_the_statistics(demo: DemoThread, isolated_home: Path) -> None:
    # Records of this very endpoint, as the app keeps them for a --base-url it was given.
    host = endpoint_host(demo.base_url)
    with Store(history_db_path()) as store:
        for n in range(4):
            record = RequestRecord(model=MODEL, endpoint_host=host, streamed=True)
            record.ttft_ms, record.total_ms = 100.0 + 50 * n, 900.0
            store.save_record(record, "reply")
    tmux = Tmux()
    try:
        tmux.start_firsttoken(isolated_home, demo.base_url, "--model", MODEL)
        tmux.wait_for(lambda s: "enter send" in s, 60, "the chat")
        for key in ("F11", "C-\\"):
            tmux.run("send-keys", "-t", tmux.session, key)
            screen = tmux.wait_for(
                lambda s: "Statistics · 4 requests kept" in s and "TTFT histogram" in s,
                30,
                f"the statistics after {key}",
            )
            assert f"▶ {MODEL}" in screen and "p50 175 ms" in screen, screen
            tmux.run("send-keys", "-t", tmux.session, "Escape")
            tmux.wait_for(lambda s: "Statistics ·" not in s, 20, "the chat again")
        tmux.run("send-keys", "-t", tmux.session, "C-q")
    finally:
        tmux.kill()
