"""Secrets in URLs: masking (userinfo, secret-looking query parameters), finding them in free
text, and the base_url's query sent as a query (not glued before the path)."""

from __future__ import annotations

import asyncio

import pytest
from helpers.client import TEST_KEY, make_client, make_request
from helpers.fault_server import FaultServer
from hypothesis import given
from hypothesis import strategies as st

from tui.engine.chat.events import Finished
from tui.engine.http.base_url import split_base_url
from tui.engine.text.redact import HIDDEN, is_secret_param, mask_url, redact_text, url_secrets


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:secret@host:8080/v1", "http://user:****@host:8080/v1"),
        ("https://sk-abcdefghijklmnop@api.example.com/v1", "https://****@api.example.com/v1"),
        (
            "https://x.example.com/openai/v1?api-version=2024-06-01&api-key=sk-abcdef123456",
            "https://x.example.com/openai/v1?api-version=2024-06-01&api-key=****",
        ),
        ("https://h/v1?key=AIzaSyA&token=t0k3n&sig=abc&x_secret=s", None),
        ("https://h/v1?access_token=a&client_password=b&page=2", None),
        ("https://api.example.com/v1", "https://api.example.com/v1"),
        ("http://[::1]:8000/v1?token=abc", "http://[::1]:8000/v1?token=****"),
    ],
)
def test_mask_url(url: str, shown: str | None) -> None:
    masked = mask_url(url)
    if shown is not None:
        assert masked == shown
    for secret in url_secrets(url):
        assert secret not in masked
    assert "page=2" in masked or "page" not in url


@pytest.mark.parametrize(
    "name", ["api-key", "api_key", "key", "token", "access_token", "sig", "x-goog-api-key"]
)
def test_secret_looking_parameters(name: str) -> None:
    assert is_secret_param(name)


@pytest.mark.parametrize("name", ["api-version", "model", "page", "format"])
def test_ordinary_parameters(name: str) -> None:
    assert not is_secret_param(name)


def test_redact_text_masks_every_url_and_every_given_secret() -> None:
    text = (
        f"GET http://u:pw-123456@h/v1?api-key=sk-zzzzzzzzzzzzzz failed; then {TEST_KEY} was refused"
    )
    shown = redact_text(text, (TEST_KEY,))
    assert "pw-123456" not in shown and "sk-zzzzzzzzzzzzzz" not in shown
    assert TEST_KEY not in shown and "sk-…9876" in shown and HIDDEN in shown


@given(st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=6))
def test_a_secret_query_value_never_survives_masking(value: str) -> None:
    url = "https://h.example/v1?api-key=" + value.replace("&", "").replace("#", "")
    masked = mask_url(url)
    for secret in url_secrets(url):
        assert secret not in masked


@pytest.mark.parametrize(
    ("base_url", "root", "query"),
    [
        ("https://h/v1", "https://h/v1", {}),
        ("https://h/v1/", "https://h/v1", {}),
        (
            "https://h/openai/v1?api-version=1&api-key=sk-x",
            "https://h/openai/v1",
            {"api-version": "1", "api-key": "sk-x"},
        ),
        ("http://u:p@h:81/v1/?token=a%2Fb", "http://u:p@h:81/v1", {"token": "a/b"}),
    ],
)
def test_split_base_url(base_url: str, root: str, query: dict[str, str]) -> None:
    assert split_base_url(base_url) == (root, query)


def test_the_query_goes_with_every_request_after_the_path() -> None:
    """The SDK joins paths onto the whole base_url string: `/v1?api-key=…/chat/completions`.
    Split off, the query follows the path, and the key never shows in an error."""
    secret = "sk-query-secret-0123456789"

    async def go(server: FaultServer) -> tuple[Finished, Finished]:
        ok = make_client(server.url("healthy") + f"?api-version=7&api-key={secret}")
        missing = make_client(server.url("404-api") + f"?api-key={secret}", max_retries=0)
        try:
            return await _finished(ok), await _finished(missing)
        finally:
            await ok.aclose()
            await missing.aclose()

    with FaultServer() as server:
        good, not_found = asyncio.run(go(server))
        targets = [target for method, target, _ in server.requests if method == "POST"]
    assert good.record.status.value == "ok"
    assert targets[0] == f"/healthy/t/v1/chat/completions?api-version=7&api-key={secret}"
    assert not_found.record.error_kind == "not_found"
    assert secret not in (not_found.record.error_message or "")
    assert secret not in not_found.record.endpoint_host


async def _finished(client) -> Finished:  # type: ignore[no-untyped-def]
    finished = None
    async for event in client.stream(make_request()):
        if isinstance(event, Finished):
            finished = event
    assert finished is not None
    return finished
