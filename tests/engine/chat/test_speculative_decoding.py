"""Speculative decoding where the server reports it: llama.cpp's `timings.draft_n` and
`draft_n_accepted` become the record's draft counts and the share accepted, beside TPOT in
ask's summary and --json; a server that reports no draft gets no figure and no guess (real
HTTP to the demo playing llama-server with and without a draft model, and to the demo playing
vLLM, which reports no draft counts in a reply)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.cli import ask_args
from helpers.client import TEST_KEY, collect, demo, make_client, make_request

from tui.commands import ask
from tui.config import Config
from tui.demo.latency_model import latency_model
from tui.engine.metrics.record import RequestStatus

PROMPT = "explain speculative decoding, reply 40 tokens"


async def test_llamacpps_draft_counts_become_the_share_accepted() -> None:
    with demo(server="llamacpp", draft_acceptance=0.75) as server:
        _, finished = await collect(make_client(server.base_url), make_request(PROMPT))
    record = finished.record
    assert record.status is RequestStatus.OK and record.server is not None
    drafted, accepted = record.server["draft_tokens"], record.server["draft_accepted"]
    assert drafted == record.output_tokens == 40 and accepted == 30
    assert record.draft_acceptance == pytest.approx(accepted / drafted)


@pytest.mark.parametrize(
    "overrides", [{"server": "llamacpp"}, {"server": "vllm", "draft_acceptance": 0.75}]
)
async def test_without_reported_draft_counts_there_is_no_figure(overrides: Any) -> None:
    with demo(**overrides) as server:
        _, finished = await collect(make_client(server.base_url), make_request(PROMPT))
    record = finished.record
    assert record.status is RequestStatus.OK
    assert record.draft_acceptance is None
    assert (record.server or {}).get("draft_tokens") is None


def test_ask_shows_the_share_beside_tpot_and_in_json(capsys: Any) -> None:
    with demo(server="llamacpp", draft_acceptance=0.5) as server:
        config = Config(base_url=server.base_url, api_key=TEST_KEY, max_retries=0)
        assert ask.run(ask_args(PROMPT), config) == 0
        _, summary = capsys.readouterr()
        assert ask.run(ask_args(PROMPT, json=True), config) == 0
        out, _ = capsys.readouterr()
    assert "draft 50% accepted" in summary
    tpot, draft = summary.index("TPOT"), summary.index("draft 50% accepted")
    assert tpot < draft  # beside TPOT, after it
    payload = json.loads(out)
    assert payload["draft_acceptance"] == pytest.approx(0.5)
    assert payload["server"]["draft_tokens"] == 40


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_a_share_outside_0_to_1_is_refused_with_its_key(share: float) -> None:
    with pytest.raises(ValueError, match="draft_acceptance"):
        latency_model("instant", {"draft_acceptance": share})
