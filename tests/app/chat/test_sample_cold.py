"""F6's trimming comparison sends the sample cold each time, so the server's prefix cache cannot
make one order of the two sends look better than the other."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.app_pilot import make_app, wait_for, wait_ready

from tui.app.panel.ttft_history import WARM_SHARE
from tui.config import ConfigFlags, load_config
from tui.demo import DemoThread, start_demo_in_thread
from tui.demo.latency_model import latency_model
from tui.engine.tokens.counter import get_counter
from tui.sample_conversation import bloated_sample
from tui.session.chat_state import ChatState


@pytest.fixture
def caching_demo() -> Iterator[DemoThread]:
    """The demo as llama.cpp: a prefix cache that reports its cached prompt tokens."""
    overrides = {"server": "llamacpp", "prefix_cache": True, "decode_tokens_per_s": 400.0}
    thread = start_demo_in_thread(latency_model("instant", overrides))
    try:
        yield thread
    finally:
        thread.stop()


def test_only_the_sample_is_tagged() -> None:
    session = ChatState.from_config(load_config(ConfigFlags(), env={}), bloated_sample())
    counter = get_counter(session.model)
    first, second = session.build_request(counter), session.build_request(counter)
    opening = [str(r.messages[0]["content"]).split("]")[0] for r in (first, second)]
    assert all(tag.startswith("[sample run ") for tag in opening)
    assert opening[0] != opening[1]  # a fresh tag on each send
    assert session.messages == bloated_sample()  # the chat itself is left as it was
    session.start_over([{"role": "user", "content": "hello"}])
    assert session.build_request(counter).messages[-1]["content"] == "hello"


@pytest.mark.e2e
async def test_both_orders_of_the_comparison_send_cold(caching_demo: DemoThread) -> None:
    app = make_app(caching_demo.base_url)
    async with app.run_test(size=(130, 36)) as pilot:
        await wait_ready(pilot)
        await pilot.press("f6")
        await wait_for(pilot, lambda: len(app.chat.state.messages) > 10, what="the sample")
        records = []
        for key in ("enter", "ctrl+t", "f5"):  # send, trimming off, send again
            before = app.chat_screen.last_record
            await pilot.press(key)
            if key == "ctrl+t":
                continue
            await wait_for(
                pilot,
                lambda before=before: (  # type: ignore[misc]
                    app.chat_screen.last_record is not before and not app.chat_screen.busy
                ),
                what=f"the reply after {key}",
            )
            records.append(app.chat_screen.last_record)
    shares = []
    for record in records:
        assert record is not None and record.server is not None
        shares.append(record.server["cached_tokens"] / record.server["prompt_tokens"])
    assert [r.trim_enabled for r in records if r is not None] == [True, False]
    assert max(shares) < WARM_SHARE, shares  # neither send was served from the cache
