"""What one HTTP exchange can fail with; client_errors.py turns each into a kind and one line.

- StatusError: the server answered 4xx or 5xx (its status, headers and body text kept).
- ConnectionFailed: no answer could be had or read; `cause` says how (refused, reset, dns, tls,
  timeout, unreachable, closed, proxy, protocol), the OS or TLS error chained as `__cause__`.
- BodyRefused: a body the client stopped reading because it broke the protocol or a limit (a
  ConnectionFailed with cause "protocol": the reply ends early, the connection is dropped).
- ServerReportedError: a 200 reply whose body (or a streamed event) is an `{"error": ...}`
  object, as servers report a failure after the head was sent.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.engine.http.headers import Headers

# How a connection failed, for ConnectionFailed.cause.
REFUSED = "refused"
RESET = "reset"
DNS = "dns"
TLS = "tls"
TIMEOUT = "timeout"
UNREACHABLE = "unreachable"  # no route, network down, an address that is not there
CLOSED = "closed"  # the server closed the connection before the response was complete
PROXY = "proxy"
PROTOCOL = "protocol"  # the server broke HTTP (a bad head, a broken body)


class RequestFailed(Exception):
    """Any failure of one exchange; never shown raw (client_errors.py words it)."""


class StatusError(RequestFailed):
    """A 4xx or 5xx answer. `text` is the body (decoded, at most a bounded amount)."""

    def __init__(self, status: int, reason: str, headers: Headers, text: str) -> None:
        super().__init__(f"HTTP {status} {reason}".strip())
        self.status = status
        self.reason = reason
        self.headers = headers
        self.text = text

    @property
    def body(self) -> object | None:
        """The body as JSON when it is JSON, else None."""
        try:
            return json.loads(self.text) if self.text else None
        except ValueError:
            return None


class ConnectionFailed(RequestFailed):
    """No answer could be had or read. `where` is host:port (never credentials)."""

    def __init__(self, cause: str, where: str, detail: str) -> None:
        super().__init__(detail)
        self.cause = cause
        self.where = where
        self.detail = detail


class BodyRefused(ConnectionFailed):
    """The client refused a body mid-way (broken framing or coding, an event over a limit)."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(PROTOCOL, where, detail)


class ServerReportedError(RequestFailed):
    """An `{"error": ...}` object in a 200 body or a streamed event; `message` is its text."""

    def __init__(self, message: str, body: object) -> None:
        super().__init__(message)
        self.message = message
        self.body = body
