"""The app with Textual's stock rendering (what a Textual the render seam does not know gets):
a representative part of the Pilot suite, run again in a process with
FIRSTTOKEN_STOCK_RENDER=1: streaming and the final update, Esc, help and the pickers (F1, F2,
F9), opening a saved chat and carrying on in it, the chat following the stream."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui.app import render

pytestmark = pytest.mark.e2e

APP_TESTS = Path(__file__).resolve().parents[1]
STOCK_PART = [
    "test_app_pilot.py::test_type_send_stream_and_metrics_match_the_record",
    "test_app_pilot.py::test_escape_keeps_the_partial_reply_marked_cancelled",
    "test_app_pilot.py::test_help_model_picker_and_system_prompt",
    "test_app_pilot.py::test_the_chat_follows_the_stream_until_the_user_scrolls_up",
    "chat/test_history_kept.py::test_resume_opens_the_chat_after_the_first_frame",
]


@pytest.mark.skipif(render.STOCK_REASON is not None, reason="this run is in stock mode already")
def test_the_app_works_with_textuals_stock_rendering() -> None:
    env = {**os.environ, "FIRSTTOKEN_STOCK_RENDER": "1"}
    # Without pytest's capture, the seam's one-line warning reaches stderr as a user's.
    command = [sys.executable, "-m", "pytest", "-s", "-n", "0", "-p", "no:cacheprovider"]
    command += ["-p", "no:logging"]
    done = subprocess.run(
        [*command, *(str(APP_TESTS / test) for test in STOCK_PART)],
        cwd=APP_TESTS.parents[1],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = done.stdout[-3000:] + done.stderr[-2000:]
    assert done.returncode == 0, report
    assert f"{len(STOCK_PART)} passed" in done.stdout, report
    # It really ran stock: the seam said so, once, in that process.
    assert "stock rendering (slower, same screen): FIRSTTOKEN_STOCK_RENDER=1" in done.stderr
