"""Trimming's real prefill gain: the bloated sample conversation, untrimmed and trimmed.

What is asserted, and why it cannot be flipped by the machine's other load:
- the structure, from the server's own account of each request (its log): the trimmed prompt
  is smaller by the server's own tokenizer, and the server evaluated fewer prompt tokens. Both
  are cold: each request opens with a tag of its own as the engine's bench sends them, and the
  two prompts differ from their first message on (this server's Gemma format drops the system
  message that carries the tag), so the server's prefix cache reuses only the chat template's
  first few tokens, which its account shows;
- the work, from the server process's CPU time per request: trimming saves prefill work. CPU
  time counts only the turns the server got, so other programs taking the cores do not swell
  it the way they swell wall time (prefill of ~7,000 tokens: under 10 s on an idle machine,
  6.4 minutes here beside two builds);
- the TTFT firsttoken measured, in the same direction. The budget leaves the trimmed prompt
  under a third of the untrimmed one (asserted above), and the two requests run back to back,
  so the trimmed one would have to get under a third of the machine the other got to lose.
No figure is compared with a fixed number of milliseconds.
"""

from __future__ import annotations

from dataclasses import replace

from real_server_support import SAMPLE_BUDGET, PromptEval, RealServer, real_config

from tui.engine.bench import new_tag, run_once, tagged
from tui.engine.chat.client import ChatClient
from tui.engine.chat.request import ChatRequest
from tui.engine.chat.request_builder import build_request
from tui.engine.metrics.record import RequestRecord, RequestStatus
from tui.engine.tokens.counter import get_counter
from tui.sample_conversation import bloated_sample
from tui.wiring import Endpoint, client_for, request_settings

CACHED_AT_MOST = 32  # the chat template's opening, before the tag


async def _measure(
    server: RealServer, client: ChatClient, request: ChatRequest
) -> tuple[RequestRecord, PromptEval, float]:
    """One cold request (its own tag): firsttoken's record, the server's account, its CPU."""
    request = replace(request, messages=tagged(request.messages, new_tag()))
    mark, cpu_before = server.log_mark(), server.cpu_seconds()
    finished = await run_once(client, request)
    evaluation = await server.prompt_eval_since(mark)
    cpu = server.cpu_seconds() - cpu_before
    assert finished.record.status is RequestStatus.OK, finished.record.error_message
    return finished.record, evaluation, cpu


async def test_trimming_the_sample_cuts_the_prompt_the_prefill_work_and_the_ttft(
    llama_server: RealServer,
) -> None:
    config = real_config(llama_server.base_url, max_tokens=1, token_budget=SAMPLE_BUDGET)
    counter = get_counter(config.model)
    sample = bloated_sample()
    untrimmed_request = build_request(
        sample, request_settings(config), counter, trim_enabled=False, stream=True
    )
    trimmed_request = build_request(
        sample, request_settings(config), counter, trim_enabled=True, stream=True
    )
    assert trimmed_request.trim is not None and trimmed_request.trim.dropped

    client = client_for(config, Endpoint(llama_server.base_url, None), counter)
    try:
        untrimmed, untrimmed_eval, untrimmed_cpu = await _measure(
            llama_server, client, untrimmed_request
        )
        trimmed, trimmed_eval, trimmed_cpu = await _measure(llama_server, client, trimmed_request)
    finally:
        await client.aclose()

    figures = (
        f"untrimmed: {untrimmed_eval}, CPU {untrimmed_cpu:.2f} s, TTFT {untrimmed.ttft_ms} ms; "
        f"trimmed: {trimmed_eval}, CPU {trimmed_cpu:.2f} s, TTFT {trimmed.ttft_ms} ms"
    )
    # Both cold: the tag left the server almost nothing to reuse.
    assert untrimmed_eval.cached <= CACHED_AT_MOST, figures
    assert trimmed_eval.cached <= CACHED_AT_MOST, figures
    # The structure, by the server's own count: a smaller prompt, fewer tokens evaluated.
    assert 3 * trimmed_eval.prompt_tokens < untrimmed_eval.prompt_tokens, figures
    assert 3 * trimmed_eval.evaluated < untrimmed_eval.evaluated, figures
    assert untrimmed_eval.evaluated == untrimmed_eval.remaining, figures
    # The work: the server spent less CPU on the trimmed request.
    assert trimmed_cpu < untrimmed_cpu, figures
    # What the user sees: an earlier first token.
    assert trimmed.ttft_ms is not None and untrimmed.ttft_ms is not None
    assert trimmed.ttft_ms < untrimmed.ttft_ms, figures
    # The records say what was sent: trimmed from the whole sample to the budget.
    assert trimmed.trim_enabled and not untrimmed.trim_enabled
    assert trimmed.tokens_after is not None and trimmed.tokens_after <= SAMPLE_BUDGET
    assert trimmed.tokens_before == untrimmed.tokens_after
