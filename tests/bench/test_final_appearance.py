"""The render harness's final-lag search (needs the `bench` extra: pyte)."""

from __future__ import annotations

import queue

import pytest

pytest.importorskip("pyte")

from benchmarks.render.screen_watch import ScreenWatcher


def _watcher(settled: list[str], history: list[tuple[float, list[str]]]) -> ScreenWatcher:
    watcher = ScreenWatcher(queue.SimpleQueue(), rows=len(settled), cols=40)
    watcher.stream.feed("\r\n".join(settled).encode())
    watcher.history.extend((at, tuple(line.ljust(40) for line in lines)) for at, lines in history)
    return watcher


def test_final_run_starts_where_the_last_words_arrived() -> None:
    settled = ["alpha beta", "gamma delta", "end of reply"]
    history = [(1.0, ["alpha beta", "gamma delta", "end of"]), (2.0, settled), (3.0, settled)]
    at, note = _watcher(settled, history).final_appearance("of reply", "reply", not_before=1.5)
    assert (at, note) == (2.0, "")


def test_a_repeating_reply_never_gives_a_time_before_the_last_token() -> None:
    # The same rows were already on screen before the server sent its last token (a cycling
    # filler written up to the same place): the answer is a lower bound after that token.
    settled = ["alpha beta", "gamma delta", "end of reply"]
    history = [(1.0, ["x", "y", "z"]), (2.0, settled), (3.0, settled), (4.0, settled)]
    at, note = _watcher(settled, history).final_appearance("of reply", "reply", not_before=2.5)
    assert at == 3.0
    assert "lower bound" in note
