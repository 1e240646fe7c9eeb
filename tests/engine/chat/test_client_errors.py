"""Every failure becomes a status, an error kind and ONE line with a hint (never a traceback)."""

from __future__ import annotations

import pytest
from helpers.client import (
    TEST_KEY,
    closed_port,
    collect,
    demo,
    fault_url,
    make_client,
    make_request,
)

from tui.engine.chat.events import Retrying
from tui.engine.metrics.record import RequestStatus


@pytest.fixture(scope="module")
def instant():
    with demo("instant") as server:
        yield server


async def _fail(base_url: str, **client_options: object):
    client_options.setdefault("max_retries", 0)
    events, finished = await collect(make_client(base_url, **client_options), make_request())
    record = finished.record
    assert record.status is RequestStatus.ERROR, record
    message = record.error_message or ""
    assert message and "\n" not in message and "Traceback" not in message
    assert TEST_KEY not in message
    return events, record


async def test_website_url_gives_404_hint(instant) -> None:
    _, record = await _fail(instant.root_url)  # no /v1: the "website"
    assert record.error_kind == "not_found"
    assert "404" in record.error_message and instant.root_url in record.error_message
    assert "base_url must be the API root" in record.error_message and "/v1" in record.error_message


@pytest.mark.parametrize("status", ["401", "403"])
async def test_refused_key_is_masked(instant, status: str) -> None:
    _, record = await _fail(fault_url(instant, status))
    assert record.error_kind == "auth"
    assert "the key was refused" in record.error_message
    assert "…" + TEST_KEY[-4:] in record.error_message


async def test_rate_limited_shows_retry_after(instant) -> None:
    _, record = await _fail(fault_url(instant, "429"))
    assert record.error_kind == "rate_limited"
    assert "rate limited" in record.error_message and "retry after 1 s" in record.error_message


@pytest.mark.parametrize("status", ["500", "503"])
async def test_server_error_names_the_status(instant, status: str) -> None:
    _, record = await _fail(fault_url(instant, status))
    assert record.error_kind == "server"
    assert f"HTTP {status}" in record.error_message


async def test_connection_refused_names_host_and_port() -> None:
    port = closed_port()
    _, record = await _fail(f"http://127.0.0.1:{port}/v1")
    assert record.error_kind == "connection"
    assert f"127.0.0.1:{port}" in record.error_message
    assert "refused" in record.error_message and "base_url" in record.error_message


async def test_unknown_host_says_check_base_url() -> None:
    _, record = await _fail("http://no-such-host.invalid/v1", timeout_s=5.0)
    assert record.error_kind in ("dns", "connection")
    assert "no-such-host.invalid" in record.error_message and "base_url" in record.error_message


async def test_dropped_connection(instant) -> None:
    _, record = await _fail(fault_url(instant, "drop"))
    assert record.error_kind == "connection"


async def test_timeout_before_first_byte_names_timeout_seconds(instant) -> None:
    _, record = await _fail(fault_url(instant, "hang"), timeout_s=0.3)
    assert record.error_kind == "timeout"
    assert "timeout_seconds" in record.error_message and "0.3" in record.error_message
    assert record.ttft_ms is None


async def test_timeouts_are_not_retried(instant) -> None:
    events, record = await _fail(fault_url(instant, "hang"), timeout_s=0.2, max_retries=2)
    assert record.retries == 0 and not any(isinstance(e, Retrying) for e in events)


async def test_context_length_exceeded_says_what_can_help_a_one_message_prompt(instant) -> None:
    _, record = await _fail(fault_url(instant, "context"), max_retries=2)
    assert record.error_kind == "context_length"
    # One message: trimming has nothing to drop, so it is not offered as the fix.
    assert "nothing trimming could drop" in record.error_message
    assert "turn trimming on" not in record.error_message
    assert "raise the server's context window" in record.error_message
    assert record.retries == 0  # a 400 is not retried


async def test_chunk_that_is_not_json(instant) -> None:
    _, record = await _fail(fault_url(instant, "badjson"))
    assert record.error_kind == "bad_json"
    assert "the server sent a chunk that is not JSON" in record.error_message


async def test_bad_json_keeps_the_partial_reply(instant) -> None:
    _, finished = await collect(make_client(fault_url(instant, "badjson")), make_request())
    assert finished.text and finished.record.ttft_ms is not None


async def test_credentials_in_the_base_url_never_reach_a_message(instant) -> None:
    url = instant.root_url.replace("http://", "http://user:hunter2-secret@")  # no /v1: a 404
    _, record = await _fail(url, api_key=None)
    assert record.error_kind == "not_found"
    assert "hunter2" not in (record.error_message or "") and "user@" not in record.error_message
    assert instant.root_url in record.error_message
