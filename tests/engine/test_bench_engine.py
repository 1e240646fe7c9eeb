"""bench / sweep / check, the engine half (tui/engine/bench.py): tags against prefix caches,
turns taken round by round, filler prompts of a given length, the fitted line. Real HTTP to
the demo endpoint where requests are sent."""

from __future__ import annotations

import pytest
from helpers.client import demo, make_client, make_request

from tui.engine.bench import (
    Variant,
    filler_messages,
    fit_line,
    fit_warning,
    run_once,
    run_rounds,
    tagged,
)
from tui.engine.tokens.counter import get_counter


def test_a_tag_opens_the_first_and_the_first_user_message_and_leaves_the_input_alone() -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "user", "content": "again"},
    ]
    out = tagged(messages, "run 1a2b")
    assert out[0]["content"] == "[run 1a2b] be brief" and out[1]["content"] == "[run 1a2b] hi"
    assert out[2] == messages[2]
    assert messages[0]["content"] == "be brief" and messages[1]["content"] == "hi"
    only_user = tagged([{"role": "user", "content": "x"}], "t")
    assert only_user == [{"role": "user", "content": "[t] x"}]


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


def _conversation() -> list[dict[str, str]]:
    """A long chat whose trimmed form keeps its opening (system prompt and the first round):
    sent without tags, the two forms share that prefix."""
    messages = [{"role": "system", "content": "You answer about latency. " * 60}]
    for n in range(10):
        messages.append({"role": "user", "content": f"round {n}: why is prefill slow? " * 25})
        messages.append({"role": "assistant", "content": "Because of the prompt's length. " * 25})
    messages.append({"role": "user", "content": "and now? reply 2 tokens"})
    return messages


def _sample_variants() -> list[Variant]:
    """bench's untrimmed and trimmed streamed variants of that chat."""
    from tui.engine.chat.request_builder import RequestSettings, build_request
    from tui.engine.tokens.trim import TrimPolicy

    counter = get_counter("gpt-4o-mini")
    settings = RequestSettings("demo-model", 0.1, 8, 2000, TrimPolicy())
    return [
        Variant(
            label,
            build_request(_conversation(), settings, counter, trim_enabled=trim, stream=True),
        )
        for label, trim in (("untrimmed", False), ("trimmed", True))
    ]


def _prefill_gain(results: list) -> float:
    """1 - trimmed / untrimmed, from the prefill the server reported (llama.cpp's timings)."""
    by_label = {r.label: r.server_percentile("prefill_ms", 50) for r in results}
    return 1.0 - by_label["trimmed"] / by_label["untrimmed"]


async def test_the_trimming_gain_is_the_same_in_either_order_every_request_cold() -> None:
    # cpu-small plays llama.cpp with its prefix cache on; a cheaper prefill per token keeps the
    # test quick (the gain is a ratio of prefills, whatever their cost per token). The server's
    # own prefill figures are compared, not wall time: load cannot move them.
    gains = []
    for order in ((0, 1), (1, 0)):
        with demo("cpu-small", prefill_ms_per_token=0.01, decode_tokens_per_s=5000.0) as server:
            client = make_client(server.base_url)
            variants = [_sample_variants()[i] for i in order]
            try:
                results = await run_rounds(client, variants, 1, lambda *_: None, warmup=1)
            finally:
                await client.aclose()
            log = server.requests
        gains.append(_prefill_gain(results))
        for result in results:
            (record,) = result.records
            assert record.server is not None
            # The tag leaves at most the template's opening (<bos><start_of_turn>user\n[…) to
            # the cache: each variant is measured cold.
            assert record.server["cached_tokens"] <= 8
        assert all(entry["cached_prompt_tokens"] <= 8 for entry in log)
    assert gains[0] > 0.5 and gains[0] == pytest.approx(gains[1], abs=0.005)


async def test_without_tags_the_order_would_decide_the_gain() -> None:
    # What the tags prevent: sent as they are, the second request reuses the first's prefix.
    gains = []
    for order in ((0, 1), (1, 0)):
        with demo("cpu-small", prefill_ms_per_token=0.01, decode_tokens_per_s=5000.0) as server:
            client = make_client(server.base_url)
            try:
                for i in order:
                    await run_once(client, _sample_variants()[i].request)
            finally:
                await client.aclose()
            first, second = server.requests
        prefill = {order[0]: first["prefill_ms"], order[1]: second["prefill_ms"]}
        gains.append(1.0 - prefill[1] / prefill[0])
    assert abs(gains[0] - gains[1]) > 0.2


async def test_a_vllm_server_caches_nothing_of_a_tagged_request() -> None:
    with demo("instant", server="vllm", prefix_cache=True) as server:
        client = make_client(server.base_url)
        request = make_request("why is prefill slow? " * 60 + "reply 3 tokens")
        variants = [Variant("a", request), Variant("b", request)]
        try:
            results = await run_rounds(client, variants, 2, lambda *_: None)
        finally:
            await client.aclose()
    cached = [r.server["cached_tokens"] for result in results for r in result.records if r.server]
    assert cached == [0, 0, 0, 0]


async def test_warm_up_requests_are_sent_first_and_discarded() -> None:
    with demo("instant") as server:
        client = make_client(server.base_url)
        warm: list[str] = []
        try:
            results = await run_rounds(
                client,
                [Variant("a", make_request()), Variant("b", make_request())],
                1,
                lambda *_: None,
                warmup=2,
                on_warmup=lambda label, finished: warm.append(label),
            )
        finally:
            await client.aclose()
        sent = len(server.requests)
    assert warm == ["warm-up", "warm-up"] and sent == 4
    assert [len(r.records) for r in results] == [1, 1]


def test_the_fit_reports_r2_and_prefill_speed_and_warns_when_not_linear() -> None:
    # llama.cpp on a 2-core machine: faster than linear growth at long prompts.
    curved = fit_line([(988.0, 1110.0), (3950.0, 4880.0), (7094.0, 9690.0)])
    assert curved is not None and curved.r2 > 0.99  # R² alone would not catch it
    warning = fit_warning(curved)
    assert warning is not None and "faster than linearly" in warning
    assert "1.27 → 1.53 ms" in warning and "below zero" in warning
    straight = fit_line([(250.0, 301.0), (1000.0, 1201.0), (4000.0, 4801.0)])
    assert straight is not None and fit_warning(straight) is None
    assert straight.r2 == pytest.approx(1.0) and straight.prefill_tokens_per_s == pytest.approx(
        1000 / 1.2
    )
    flat = fit_line([(100.0, 3.0), (400.0, 2.0), (1200.0, 4.0)])  # TTFT hardly moves: noise
    assert flat is not None and fit_warning(flat) is None
