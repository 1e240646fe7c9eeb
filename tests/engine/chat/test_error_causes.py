"""Each failure names its own cause and fix: a connection dropped before any answer is not a
context problem, an empty 200 stream is told apart from one cut after its head, a context
overflow on a trimmed prompt asks for a lower budget and keeps the server's limit, TLS to a
plain port says so."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest
from helpers.client import make_client, make_request
from helpers.fault_server import CONTEXT_MESSAGE, FaultServer

from tui.engine.chat.events import Finished
from tui.engine.metrics.record import RequestRecord
from tui.engine.tokens.counter import get_counter
from tui.engine.tokens.trim import TrimPolicy, trim


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    with FaultServer() as running:
        yield running


# A conversation with history to drop: about 2,400 tokens, so a 1,500-token budget trims it.
HISTORY = [
    message
    for n in range(8)
    for message in (
        {"role": "user", "content": f"question {n}: " + "why is prefill slow? " * 30},
        {"role": "assistant", "content": "because it grows with the prompt. " * 30},
    )
] + [{"role": "user", "content": "and now?"}]


def _record(
    base_url: str, trimmed: bool = False, messages: list[dict[str, str]] | None = None
) -> RequestRecord:
    request = make_request() if messages is None else make_request(messages=messages)
    if trimmed:
        result = trim(request.messages, 1500, TrimPolicy(), get_counter("demo-model"))
        request = make_request(messages=result.messages, trim=result)

    async def go() -> Finished:
        client = make_client(base_url, max_retries=0, timeout_s=2.0)
        try:
            async for event in client.stream(request):
                if isinstance(event, Finished):
                    return event
        finally:
            await client.aclose()
        raise AssertionError("no Finished")

    return asyncio.run(go()).record


def test_a_drop_before_the_response_head_is_a_connection_problem(server) -> None:
    record = _record(server.url("drop-before", "a"))
    assert record.error_kind == "connection"
    assert (record.error_message or "").startswith("the connection closed before any answer")
    assert "context" not in (record.error_message or "")


def test_an_empty_200_stream_and_one_cut_after_its_head_say_different_things(server) -> None:
    cut = _record(server.url("drop-after-head", "b"))
    empty = _record(server.url("empty", "b"))
    assert cut.error_kind == empty.error_kind == "empty_stream"
    assert "closed the connection before any event" in (cut.error_message or "")
    assert "ended with no event at all" in (empty.error_message or "")


def test_context_overflow_hints_follow_the_trimming(server) -> None:
    untrimmed = _record(server.url("context", "c"), messages=HISTORY)
    trimmed = _record(server.url("context", "d"), trimmed=True, messages=HISTORY)
    assert untrimmed.error_kind == trimmed.error_kind == "context_length"
    assert "sent whole, trimming is off" in (untrimmed.error_message or "")
    assert "turn trimming on with a budget below 4,096 (the server's window)" in (
        untrimmed.error_message or ""
    )
    message = trimmed.error_message or ""
    assert "turn trimming on" not in message
    # What trimming left, by the local count, and what it dropped: not the budget alone.
    left = re.search(
        r"even trimmed to ([\d,]+) tokens \(budget 1,500, \d+ messages dropped\)", message
    )
    assert left is not None and int(left[1].replace(",", "")) <= 1500
    assert "lower the budget below 4,096 (the server's window) or raise" in message
    assert CONTEXT_MESSAGE.split(". However")[0] in message  # the server's limit is kept


def test_a_short_prompt_within_the_budget_is_not_said_to_be_trimmed(server) -> None:
    """A 9-token prompt under a 1,500-token budget: "even trimmed to 1,500 tokens" would be
    false, and a lower budget cannot help a prompt with nothing to drop."""
    message = _record(server.url("context", "s"), trimmed=True).error_message or ""
    assert "even trimmed" not in message and "1,500" not in message.split("; the server")[0]
    assert "nothing trimming could drop" in message
    assert "send a shorter prompt, ask for a shorter reply (maxTokens) or raise" in message


def test_trimmed_empty_stream_hint_asks_for_a_lower_budget(server) -> None:
    record = _record(server.url("empty", "e"), trimmed=True, messages=HISTORY)
    assert "lower the budget or raise the server's context window" in (record.error_message or "")


def test_tls_to_a_plain_http_port(server) -> None:
    record = _record(server.url("healthy", "f").replace("http://", "https://"))
    assert record.error_kind == "connection"
    assert (record.error_message or "").startswith("TLS to a port that speaks plain HTTP?")
    assert "try http://" in (record.error_message or "")
