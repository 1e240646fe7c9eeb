"""A base_url checked before anything is sent, and split into what the HTTP client joins paths
onto and the query it sends.

A base_url that does not parse (no host, a port that is not a number from 1 to 65535, an IPv6
address without its closing bracket, a scheme other than http or https) is refused with a reason
that quotes none of the URL: it may hold a password or a key.

Some gateways take the key or the API version as a query parameter
(`https://example.azure.com/openai/v1?api-version=…&api-key=…`). The SDK appends each path to
the whole base URL string, which would put the path after the query
(`/v1?api-key=…/chat/completions`); so the query is split off here and sent with every
request as the SDK's `default_query`.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from tui.engine.http.url import DEFAULT_PORTS, BadURL, parse_url

_SHOWN_SCHEME_LENGTH = 12  # a longer "scheme" is more likely pasted text than a scheme


def check_base_url(base_url: str) -> str:
    """The base_url without surrounding space, when requests can be sent to it; else BadURL
    saying what is wrong (its scheme or a numeric port at most are quoted)."""
    url = base_url.strip()
    scheme, sep, _ = url.partition("://")
    if not sep:
        raise BadURL("it has no scheme (it must start with http:// or https://)")
    if scheme.lower() not in DEFAULT_PORTS:
        short = scheme.isascii() and scheme.isalnum() and len(scheme) <= _SHOWN_SCHEME_LENGTH
        named = f" {scheme}://" if short else ""
        raise BadURL(f"its scheme{named} is not http:// or https://")
    if any(char.isspace() or ord(char) < 32 or ord(char) == 127 for char in url):
        raise BadURL("it holds a space or a control character")
    rest = url.partition("://")[2]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]  # as urlsplit finds it, unchecked
    _check_host_port(authority.rpartition("@")[2])
    try:
        parse_url(url)
    except BadURL:
        raise BadURL("it is not a usable URL") from None
    return url


def _check_host_port(host_port: str) -> None:
    if host_port.startswith("["):
        literal, closed, after = host_port[1:].partition("]")
        if not closed:
            raise BadURL("its IPv6 address has no closing ] (e.g. http://[::1]:8080/v1)")
        try:
            ipaddress.IPv6Address(literal.replace("%25", "%"))
        except ValueError:
            raise BadURL("the address in [ ] is not an IPv6 address") from None
        if after and not after.startswith(":"):
            raise BadURL("after the ] of its IPv6 address comes something other than :PORT")
        _check_port(after[1:])
        return
    host, _, port = host_port.partition(":")
    if not host:
        raise BadURL("it has no host (e.g. https://api.example.com/v1)")
    if "[" in host or "]" in host:
        raise BadURL("its host holds a [ or ] outside an IPv6 address")
    _check_port(port)


def _check_port(port: str) -> None:
    """An empty port is the scheme's default (`http://host:/v1` is valid)."""
    if not port:
        return
    if not (port.isascii() and port.isdigit()):
        raise BadURL("its port is not a number (e.g. http://localhost:8080/v1)")
    if not 1 <= int(port) <= 65535:
        shown = f" {int(port)}" if len(port) <= 6 else ""
        raise BadURL(f"its port{shown} is not between 1 and 65535")


def split_base_url(base_url: str) -> tuple[str, dict[str, str]]:
    """(the URL without query, fragment or trailing slash; its query parameters in order).
    A parameter given twice keeps its last value, as most servers read it."""
    parts = urlsplit(base_url)
    root = urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")).rstrip("/")
    return root, dict(parse_qsl(parts.query, keep_blank_values=True))
