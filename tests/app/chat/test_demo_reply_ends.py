"""The demo's replies in the app end at a sentence (a reply cut mid-sentence with status ok
reads like a stall), for a plain and a reasoning model, a short prompt and the sample."""

from __future__ import annotations

import pytest
from helpers.app_pilot import make_app, send_and_wait, send_sample_and_wait, wait_ready

from tui.demo import DemoThread
from tui.engine.metrics.record import RequestStatus

pytestmark = pytest.mark.e2e

SENTENCE_ENDS = (".", "!", "?", "。", "```")


@pytest.mark.parametrize("model", ["firsttoken-demo", "firsttoken-demo-reasoning"])
async def test_the_demos_replies_end_at_a_sentence(demo: DemoThread, model: str) -> None:
    app = make_app(demo.base_url, model=model)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_ready(pilot)
        for prompt in ("What is TTFT?", "hi"):
            record = await send_and_wait(pilot, prompt)
            assert record.status == RequestStatus.OK
            assert app.chat.state.messages[-1]["content"].rstrip().endswith(SENTENCE_ENDS)
        await send_sample_and_wait(pilot)
        assert app.chat.state.messages[-1]["content"].rstrip().endswith(SENTENCE_ENDS)
