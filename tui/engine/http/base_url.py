"""A base_url split into what the HTTP client joins paths onto and the query it sends.

Some gateways take the key or the API version as a query parameter
(`https://example.azure.com/openai/v1?api-version=…&api-key=…`). The SDK appends each path to
the whole base URL string, which would put the path after the query
(`/v1?api-key=…/chat/completions`); so the query is split off here and sent with every
request as the SDK's `default_query`.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit, urlunsplit


def split_base_url(base_url: str) -> tuple[str, dict[str, str]]:
    """(the URL without query, fragment or trailing slash; its query parameters in order).
    A parameter given twice keeps its last value, as most servers read it."""
    parts = urlsplit(base_url)
    root = urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")).rstrip("/")
    return root, dict(parse_qsl(parts.query, keep_blank_values=True))
