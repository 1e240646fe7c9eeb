from __future__ import annotations

from collections.abc import Iterator

import pytest

from tui.engine.demo_server import DemoThread, start_demo_in_thread
from tui.engine.latency_model import latency_model


@pytest.fixture
def demo() -> Iterator[DemoThread]:
    """The embedded demo endpoint with no simulated latency (fast, deterministic)."""
    thread = start_demo_in_thread(latency_model("instant"))
    try:
        yield thread
    finally:
        thread.stop()


@pytest.fixture
def slow_demo() -> Iterator[DemoThread]:
    """60 tokens/s: a long reply is still streaming when the test presses Esc."""
    thread = start_demo_in_thread(latency_model("cpu-small"))
    try:
        yield thread
    finally:
        thread.stop()
