"""URLs as the client needs them: where to connect, what to put in the request line, and an API
path joined onto a base URL whose own query stays a query.

`https://host/v1?api-version=1` joined with `/chat/completions` is
`https://host/v1/chat/completions?api-version=1`: a plain string concatenation would send the
path inside the query.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlencode, urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


class BadURL(ValueError):
    """A URL the client cannot send to; the message says why in one line (no credentials)."""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a connection goes: scheme, host (an IPv6 literal without brackets) and port."""

    scheme: str
    host: str
    port: int

    @property
    def is_ip_literal(self) -> bool:
        try:
            ipaddress.ip_address(self.host)
        except ValueError:
            return False
        return True

    @property
    def host_port(self) -> str:
        """host:port, the IPv6 literal in brackets (the CONNECT target, and messages)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def host_header(self) -> str:
        """The Host header: the port only when it is not the scheme's default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = DEFAULT_PORTS.get(self.scheme)
        return host if self.port == default else f"{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class Target:
    """An absolute URL taken apart: its origin, the path with its query, and any credentials."""

    origin: Origin
    path_and_query: str
    username: str | None = None
    password: str | None = None

    @property
    def absolute(self) -> str:
        """The URL again without credentials (the request line through an HTTP proxy)."""
        return f"{self.origin.scheme}://{self.origin.host_header}{self.path_and_query}"


def parse_url(url: str) -> Target:
    """Raises BadURL for anything but an http(s) URL with a host (and a valid port)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as error:
        raise BadURL(f"not a usable URL ({error})") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise BadURL(f"the scheme {scheme or '(none)'!r} is not http or https")
    host = parts.hostname
    if not host:
        raise BadURL("the URL has no host")
    path = parts.path or "/"
    if any(ch in path for ch in " \r\n\t") or any(ch in parts.query for ch in " \r\n\t"):
        raise BadURL("the URL's path or query holds a space or a line break")
    path_and_query = path + (f"?{parts.query}" if parts.query else "")
    return Target(
        Origin(scheme, host.lower(), port or DEFAULT_PORTS[scheme]),
        path_and_query,
        unquote(parts.username) if parts.username is not None else None,
        unquote(parts.password) if parts.password is not None else None,
    )


def join_url(base_url: str, path: str, extra_query: Mapping[str, str] | None = None) -> str:
    """`path` appended to the base URL's path, the base URL's query (then `extra_query`) after it.

    The fragment is dropped; a trailing slash on the base does not double.
    """
    base, _, _fragment = base_url.partition("#")
    base, sep, query = base.partition("?")
    joined = base.rstrip("/") + "/" + path.lstrip("/")
    queries = [query] if sep and query else []
    if extra_query:
        queries.append(urlencode(list(extra_query.items()), quote_via=quote))
    return joined + ("?" + "&".join(queries) if queries else "")


def without_query(url: str) -> str:
    """The URL up to its path: what a message may name (a query can hold a key)."""
    return url.partition("#")[0].partition("?")[0]
