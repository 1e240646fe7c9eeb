"""bench / sweep / check, the engine half (tui/engine/bench.py): tags against prefix caches,
turns taken round by round, filler prompts of a given length, the fitted line. Real HTTP to
the demo endpoint where requests are sent."""

from __future__ import annotations

import pytest
from helpers.client import demo, make_client, make_request

from tui.engine.bench import Variant, filler_messages, fit_line, run_rounds, tagged
from tui.engine.tokens import get_counter


def test_a_tag_opens_the_first_message_and_leaves_the_input_alone() -> None:
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    out = tagged(messages, "run 1a2b")
    assert out[0]["content"] == "[run 1a2b] be brief" and out[1] == messages[1]
    assert messages[0]["content"] == "be brief"


def test_the_fitted_line_goes_through_points_on_a_line() -> None:
    fit = fit_line([(100.0, 62.0), (1000.0, 1232.0), (4000.0, 5132.0)])
    assert fit is not None
    assert fit.ms_per_token == pytest.approx(1.3) and fit.intercept_ms == pytest.approx(-68.0)
    assert fit_line([(500.0, 10.0), (500.0, 12.0)]) is None  # one length: no slope


@pytest.mark.parametrize("tokens", [60, 700, 3000])
def test_a_filler_prompt_has_about_the_tokens_asked_for(tokens: int) -> None:
    counter = get_counter("gpt-4o-mini")
    messages = tagged(filler_messages(tokens, counter), "run 0f0f0f0f")
    counted = counter.count_messages(messages)
    assert abs(counted - tokens) <= 8  # the tag of each run tokenizes a little differently


async def test_variants_take_turns_and_no_request_reuses_a_cached_prefix() -> None:
    # The demo's prefix cache charges prefill only for what differs from the last prompt: a
    # repeat of the same messages would cost nearly none.
    with demo("instant", prefill_ms_per_token=0.5, prefix_cache=True) as server:
        client = make_client(server.base_url)
        # ~200 tokens, so the few tokens of each run's tag barely change the prefill.
        request = make_request("why is prefill slow? " * 40 + "reply 3 tokens")
        seen: list[str] = []
        try:
            results = await run_rounds(
                client,
                [Variant("a", request), Variant("b", request)],
                2,
                lambda label, finished: seen.append(label),
            )
        finally:
            await client.aclose()
        prefills = [entry["prefill_ms"] for entry in server.server.requests]
    assert seen == ["a", "b", "b", "a"]  # the order reverses every other round
    assert [len(r.ok) for r in results] == [2, 2]
    assert len(prefills) == 4 and min(prefills) >= 0.9 * max(prefills) > 0
