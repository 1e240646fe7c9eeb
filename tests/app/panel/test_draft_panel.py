"""The panel after a reply from a server doing speculative decoding: the share of the draft
model's tokens accepted sits in the timings under TPOT, and a reply without draft counts shows
no such line (real HTTP to the demo playing llama-server with a draft model)."""

from __future__ import annotations

import pytest
from helpers.app_pilot import make_app, send_and_wait, wait_ready
from helpers.client import demo
from textual.widgets import Static

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(("share", "line"), [(0.8, "draft 80% accepted"), (0.0, None)])
async def test_the_share_accepted_shows_under_tpot(share: float, line: str | None) -> None:
    with demo(server="llamacpp", draft_acceptance=share) as server:
        app = make_app(server.base_url, llamacpp=True)
        async with app.run_test(size=(130, 40)) as pilot:
            await wait_ready(pilot)
            record = await send_and_wait(pilot, "what is a draft model? reply 20 tokens")
            shown = str(app.query_one("#timings", Static).content)
    assert record.draft_acceptance == (share or None)
    if line is None:
        assert "draft" not in shown and "TPOT" in shown
    else:
        assert shown.index("TPOT") < shown.index(line)
