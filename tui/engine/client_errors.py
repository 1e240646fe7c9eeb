"""Turn whatever a request raised into an error kind and ONE line a person can act on.

The client never shows a traceback: every failure becomes `ClassifiedError(kind, message,
retryable, retry_after_s)`. Messages name the URL / host / setting to fix and never contain the
API key (only its masked form).
"""

from __future__ import annotations

import errno
import json
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from tui.engine.http.errors import (
    PROXY,
    ConnectionFailed,
    ServerReportedError,
    StatusError,
)
from tui.engine.redact import mask_secret

# Longest Retry-After we honour before retrying; a server asking for minutes is better reported.
RETRY_AFTER_CAP_S = 20.0


@dataclass(frozen=True, slots=True)
class ClassifiedError:
    kind: str  # not_found, auth, rate_limited, server, connection, dns, timeout, context_length,
    #            bad_request, bad_json, empty_stream, unexpected
    message: str  # one line, with a hint
    retryable: bool = False
    retry_after_s: float | None = None


def host_port(url: str) -> str:
    """ "host:port" of a URL, with the scheme's default port filled in."""
    parts = urlsplit(url)
    host = parts.hostname or url
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{host}:{port}"


def mask_key(key: str | None) -> str:
    """The masked key for messages ("sk-…abcd")."""
    return mask_secret(key) if key else "(none)"


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _retry_after(headers: object) -> float | None:
    value = getattr(headers, "get", lambda _k: None)("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP-date; rare for LLM APIs, treat as unknown


def _body_text(error: StatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        code = inner.get("code") if isinstance(inner, dict) else None
        if isinstance(message, str) and message:
            # Keep the code: "context_length_exceeded" may only be in the code.
            return f"{message} ({code})" if code else message
    if isinstance(body, (dict, list)):
        return json.dumps(body)
    if body is not None:
        return str(body)
    return error.text


def _is_context_overflow(text: str) -> bool:
    lowered = text.lower()
    return any(
        marker in lowered
        for marker in (
            "context_length_exceeded",
            "maximum context length",
            "context length",
            "exceeds the context",
            "exceed_context_size",
        )
    )


def _connection_cause(error: BaseException) -> BaseException:
    """The innermost cause: the HTTP client's errors wrap OS and TLS errors."""
    seen = error
    while seen.__cause__ is not None or seen.__context__ is not None:
        nxt = seen.__cause__ or seen.__context__
        if nxt is None or nxt is seen:
            break
        seen = nxt
    return seen


def classify_status(error: StatusError, url: str, api_key: str | None) -> ClassifiedError:
    status = error.status
    if status == 404:
        return ClassifiedError(
            "not_found",
            f"the API answered 404 at {url}: base_url must be the API root "
            "(often ending in /v1), not the website",
        )
    if status in (401, 403):
        return ClassifiedError(
            "auth",
            f"the key was refused ({mask_key(api_key)}, HTTP {status}): "
            "check the API key (FIRSTTOKEN_API_KEY / OPENAI_API_KEY) for this base_url",
        )
    if status == 429:
        after = _retry_after(error.headers)
        wait = f", retry after {after:g} s" if after is not None else ""
        return ClassifiedError(
            "rate_limited",
            f"rate limited by {host_port(url)} (HTTP 429{wait}): wait, or lower the request rate",
            retryable=True,
            retry_after_s=after,
        )
    text = _body_text(error)
    if status >= 500:
        detail = f": {_one_line(text, 120)}" if text else ""
        return ClassifiedError(
            "server",
            f"server error HTTP {status} from {host_port(url)}{detail}",
            retryable=True,
            retry_after_s=_retry_after(error.headers),
        )
    if _is_context_overflow(text):
        return ClassifiedError(
            "context_length",
            "the prompt exceeds the model's context length: turn trimming on or lower the budget",
        )
    detail = f": {_one_line(text, 160)}" if text else ""
    return ClassifiedError("bad_request", f"the API answered HTTP {status}{detail}")


def classify_connection(error: BaseException, url: str) -> ClassifiedError:
    where = host_port(url)
    cause = _connection_cause(error)
    if isinstance(cause, socket.gaierror):
        host = urlsplit(url).hostname or url
        return ClassifiedError(
            "dns",
            f"cannot resolve host {host!r} ({where}): check base_url",
            retryable=True,
        )
    if isinstance(cause, ConnectionRefusedError) or getattr(cause, "errno", None) == (
        errno.ECONNREFUSED
    ):
        return ClassifiedError(
            "connection",
            f"connection refused at {where}: check base_url and that the server is running",
            retryable=True,
        )
    reason = _one_line(str(cause) or type(cause).__name__, 100)
    return ClassifiedError(
        "connection",
        f"cannot talk to {where} ({reason}): check base_url and that the server is running",
        retryable=True,
    )


def timeout_error(url: str, timeout_s: float) -> ClassifiedError:
    return ClassifiedError(
        "timeout",
        f"no answer from {host_port(url)} within timeout_seconds = {timeout_s:g} s: "
        "the server may be overloaded or the prompt very long; raise timeout_seconds",
    )


def bad_json_error(url: str) -> ClassifiedError:
    return ClassifiedError(
        "bad_json",
        f"the server sent a chunk that is not JSON ({host_port(url)}): "
        "is base_url an OpenAI-compatible API?",
    )


def empty_stream_error() -> ClassifiedError:
    # llama.cpp answers an over-long prompt with HTTP 200 and an empty stream.
    return ClassifiedError(
        "empty_stream",
        "the stream ended before any token: the prompt may exceed the context window: "
        "turn trimming on or lower the budget",
    )


def ended_early_error() -> ClassifiedError:
    return ClassifiedError(
        "ended_early",
        "the stream ended without a finish reason: the reply may be cut off",
    )


def broken_body_error(reason: str) -> ClassifiedError:
    """A body the client refused mid-stream: broken chunked coding, or an SSE line or event over
    the client's limits (`reason` says which)."""
    return ClassifiedError(
        "ended_early",
        f"the stream broke off on a bad body from the server ({_one_line(reason, 120)}): "
        "the reply may be cut off",
    )


def stalled_error(chunk_timeout_ms: float) -> ClassifiedError:
    return ClassifiedError(
        "stalled",
        f"no chunk for chunk_timeout_ms = {chunk_timeout_ms:g} ms: the stream stalled; "
        "the partial reply is kept",
    )


def proxy_error(error: ConnectionFailed) -> ClassifiedError:
    """A proxy from the environment that could not be reached or refused the tunnel (`where`
    names it by host, port and variable, never with its credentials)."""
    return ClassifiedError(
        "connection",
        f"proxy {error.where}: {_one_line(error.detail, 120)}: check the proxy variable "
        "(or add the host to NO_PROXY)",
        retryable=True,
    )


def classify(error: BaseException, url: str, api_key: str | None) -> ClassifiedError:
    """Any exception from one request attempt -> kind + one line (never a traceback)."""
    if isinstance(error, StatusError):
        return classify_status(error, url, api_key)
    if isinstance(error, json.JSONDecodeError):
        return bad_json_error(url)
    if isinstance(error, ConnectionFailed):
        if error.cause == PROXY:
            return proxy_error(error)
        return classify_connection(error, url)
    if isinstance(error, ServerReportedError):
        # A mid-stream `{"error": ...}` object, with its message.
        text = _one_line(error.message or type(error).__name__, 160)
        if _is_context_overflow(text):
            return ClassifiedError(
                "context_length",
                "the prompt exceeds the model's context length: "
                "turn trimming on or lower the budget",
            )
        return ClassifiedError("server", f"the server reported an error mid-stream: {text}")
    if isinstance(error, OSError):
        return classify_connection(error, url)
    text = _one_line(str(error), 160)
    suffix = f": {text}" if text else ""
    return ClassifiedError("unexpected", f"unexpected {type(error).__name__}{suffix}")
