from __future__ import annotations

from collections.abc import Iterator

import pytest

from tui.demo import DemoThread, start_demo_in_thread
from tui.demo.latency_model import latency_model


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


@pytest.fixture
def paced_demo() -> Iterator[DemoThread]:
    """400 tokens/s, no other latency: each token its own packet, so the per-token figures
    (tokens per second, time per token) are measured; from the instant preset a short reply
    arrives in one packet and they are rightly "—". A 400-token reply streams for about a
    second, so a test can look at the screen between writes."""
    thread = start_demo_in_thread(latency_model("instant", {"decode_tokens_per_s": 400.0}))
    try:
        yield thread
    finally:
        thread.stop()
