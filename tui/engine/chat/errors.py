"""Turn whatever a request raised into an error kind and ONE line a person can act on.

The client never shows a traceback: every failure becomes `ClassifiedError(kind, message,
retryable, retry_after_s)`. Messages name the URL / host / setting to fix and never contain the
API key (only its masked form).
"""

from __future__ import annotations

import errno
import json
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

from tui.engine.chat.context_overflow import PromptFit, overflow_hint, stated_window
from tui.engine.http.errors import (
    CLOSED,
    PROXY,
    RESET,
    BodyRefused,
    ConnectionFailed,
    ServerReportedError,
    StatusError,
)
from tui.engine.text.redact import mask_secret, mask_url, redact_text

# Longest Retry-After we honour before retrying; a server asking for minutes is better reported.
RETRY_AFTER_CAP_S = 20.0


@dataclass(frozen=True, slots=True)
class ClassifiedError:
    kind: str  # not_found, auth, rate_limited, server, connection, dns, timeout, context_length,
    #            bad_request, bad_json, bad_body, empty_stream, ended_early, stalled,
    #            unexpected
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


def context_length_error(server_text: str, fit: PromptFit | None) -> ClassifiedError:
    """The prompt is over the model's context: what is true of the prompt and its fix depend on
    what was sent (context_overflow.py), and the server's own words (its limit) are kept."""
    said = f"; the server said: {_one_line(server_text, 200)}" if server_text else ""
    fact, fix = overflow_hint(fit, stated_window(server_text))
    return ClassifiedError(
        "context_length", f"the prompt exceeds the model's context length{fact}: {fix}{said}"
    )


def _causes(error: BaseException) -> list[BaseException]:
    """The error and every cause under it, outermost first."""
    chain = [error]
    seen = error
    while True:
        nxt = seen.__cause__ or seen.__context__
        if nxt is None or any(nxt is known for known in chain):
            return chain
        chain.append(nxt)
        seen = nxt


def _connection_cause(error: BaseException) -> BaseException:
    """The innermost cause: the HTTP client's errors wrap OS and TLS errors."""
    seen = error
    while seen.__cause__ is not None or seen.__context__ is not None:
        nxt = seen.__cause__ or seen.__context__
        if nxt is None or nxt is seen:
            break
        seen = nxt
    return seen


def classify_status(
    error: StatusError,
    url: str,
    api_key: str | None,
    fit: PromptFit | None = None,
) -> ClassifiedError:
    status = error.status
    if status == 404:
        return ClassifiedError(
            "not_found",
            f"the API answered 404 at {mask_url(url)}: base_url must be the API root "
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
        return context_length_error(text, fit)
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
    tls = next((e for e in _causes(error) if isinstance(e, ssl.SSLError)), None)
    if tls is not None:
        if "WRONG_VERSION_NUMBER" in str(tls) or "wrong version number" in str(tls):
            return ClassifiedError(
                "connection",
                f"TLS to a port that speaks plain HTTP? {where} did not answer the TLS "
                "handshake: try http:// instead of https:// in base_url",
            )
        return ClassifiedError(
            "connection",
            f"the TLS handshake with {where} failed ({_one_line(str(tls), 100)}): check the "
            "https:// address and the server's certificate",
        )
    if _closed_before_answer(error):
        return ClassifiedError(
            "connection",
            f"the connection closed before any answer: {where} accepted the request and hung "
            f"up ({reason}); check the server's log (it may have crashed) and any proxy between",
            retryable=True,
        )
    return ClassifiedError(
        "connection",
        f"cannot talk to {where} ({reason}): check base_url and that the server is running",
        retryable=True,
    )


def _closed_before_answer(error: BaseException) -> bool:
    """Whether the server closed the connection before the response head (the request went
    out): the HTTP client says CLOSED or RESET, an OS error says ECONNRESET."""
    for cause in _causes(error):
        if isinstance(cause, ConnectionFailed) and cause.cause in (CLOSED, RESET):
            return True
        if isinstance(cause, (ConnectionResetError, BrokenPipeError)):
            return True
    return False


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


def empty_stream_error(
    *, events: int = 0, broke_off: bool = False, fit: PromptFit | None = None
) -> ClassifiedError:
    """A streamed answer (HTTP 200) with no token. Some llama.cpp builds answer a prompt over
    their context window this way, so the context is named as one possible cause."""
    hint = overflow_hint(fit)[1]
    if broke_off and not events:
        what = "the server answered HTTP 200, then closed the connection before any event"
    elif not events:
        what = "the stream ended with no event at all (HTTP 200, empty body)"
    elif broke_off:
        what = "the connection closed before any token (after events without text)"
    else:
        what = "the stream ended before any token"
    return ClassifiedError(
        "empty_stream",
        f"{what}: the server produced nothing for this request (llama.cpp does this when the "
        f"prompt exceeds its context window: {hint}; otherwise check the server's log)",
    )


def ended_early_error(broke_off: bool = False) -> ClassifiedError:
    how = "the connection closed mid-reply" if broke_off else "the stream ended"
    return ClassifiedError(
        "ended_early",
        f"{how} without a finish reason: the reply may be cut off (the partial reply is kept)",
    )


def broken_body_error(reason: str) -> ClassifiedError:
    """A body the client refused mid-stream: broken chunked coding, or an SSE line or event over
    the client's limits (`reason` says which)."""
    return ClassifiedError(
        "ended_early",
        f"the stream broke off on a bad body from the server ({_one_line(reason, 120)}): "
        "the reply may be cut off",
    )


def stalled_error(chunk_timeout_ms: float, setting: str | None = None) -> ClassifiedError:
    """A stream given up after a gap of `chunk_timeout_ms`; `setting` says which key, in which
    file, sets that limit (the fix is to raise it there)."""
    if setting is None:
        return ClassifiedError(
            "stalled",
            f"no chunk for chunk_timeout_ms = {chunk_timeout_ms:g} ms: the stream stalled; "
            "the partial reply is kept",
        )
    return ClassifiedError(
        "stalled",
        f"no token for {chunk_timeout_ms / 1000:g} s: the stream stalled (the partial reply "
        f"is kept); if the server pauses this long, raise {setting}",
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


def classify(
    error: BaseException,
    url: str,
    api_key: str | None,
    *,
    fit: PromptFit | None = None,
    secrets: tuple[str, ...] = (),
) -> ClassifiedError:
    """Any exception from one request attempt -> kind + one line (never a traceback).
    `fit`: what was sent (context_overflow.prompt_fit), for a context overflow's hint.
    `secrets`: what the client sent that no message may show; the server's words are masked
    before they are shortened, so a cut never leaves part of a secret."""
    if isinstance(error, StatusError):
        if secrets:
            masked = StatusError(
                error.status, error.reason, error.headers, redact_text(error.text, secrets)
            )
            return classify_status(masked, url, api_key, fit)
        return classify_status(error, url, api_key, fit)
    if isinstance(error, ServerReportedError) and secrets:
        error = ServerReportedError(redact_text(error.message, secrets), None)
    if isinstance(error, json.JSONDecodeError):
        return bad_json_error(url)
    if isinstance(error, BodyRefused):
        return ClassifiedError(
            "bad_body",
            f"the answer from {host_port(url)} could not be read: {_one_line(error.detail, 120)}"
            "; the server (or a proxy between) sent a broken body",
        )
    if isinstance(error, ConnectionFailed):
        if error.cause == PROXY:
            return proxy_error(error)
        return classify_connection(error, url)
    if isinstance(error, ServerReportedError):
        # A mid-stream `{"error": ...}` object, with its message.
        text = _one_line(error.message or type(error).__name__, 160)
        if _is_context_overflow(text):
            return context_length_error(text, fit)
        return ClassifiedError("server", f"the server reported an error mid-stream: {text}")
    if isinstance(error, OSError):
        return classify_connection(error, url)
    text = _one_line(redact_text(str(error), secrets), 160)
    suffix = f": {text}" if text else ""
    return ClassifiedError("unexpected", f"unexpected {type(error).__name__}{suffix}")
