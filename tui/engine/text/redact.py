"""Secrets shown masked: the one rule for every message, record and screen that names a key.

A key can sit in three places: the API key itself, a URL's userinfo (`http://user:secret@host`)
and a query parameter (`…/v1?api-key=sk-…`). `mask_secret` masks a key, `mask_url` a URL,
`redact_text` any URL inside free text (an error message, an exception's string).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

HIDDEN = "****"

# Query parameter names that carry a credential: exact names, and any name containing a word
# that says so (api-key, x-goog-api-key, access_token, client_secret, password, ...).
_SECRET_PARAMS = frozenset({"key", "sig", "signature", "auth", "code", "pass", "pwd"})
_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "credential", "auth", "sig")
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]+")


def mask_secret(secret: str) -> str:
    """ "sk-…abcd": a known prefix and at most the last 4 characters; short keys fully hidden."""
    prefix = "sk-" if secret.startswith("sk-") else ""
    body = secret[len(prefix) :]
    if len(body) < 12:  # too short to reveal any of it without giving much away
        return HIDDEN
    return f"{prefix}…{body[-4:]}"


def is_secret_param(name: str) -> bool:
    """Whether a query parameter of this name carries a credential."""
    lowered = name.lower()
    return lowered in _SECRET_PARAMS or any(word in lowered for word in _SECRET_WORDS)


def mask_url(url: str) -> str:
    """`url` with its userinfo password and secret-looking query values hidden (`****`); the
    user name, host, path and other parameters stay, so the URL is still recognisable."""
    try:
        parts = urlsplit(url)
        hostname = parts.hostname
        port = parts.port
    except ValueError:  # a malformed port or bracket: hide everything after the scheme
        scheme, sep, _ = url.partition("://")
        return f"{scheme}://{HIDDEN}" if sep else HIDDEN
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, _ = netloc.rpartition("@")
        user, has_password, _ = userinfo.partition(":")
        host = hostname or ""
        if ":" in host:  # an IPv6 literal
            host = f"[{host}]"
        shown_user = f"{user}:{HIDDEN}" if has_password else (HIDDEN if user else "")
        netloc = f"{shown_user}@{host}" + (f":{port}" if port is not None else "")
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_param(name) for name, _ in pairs):
            query = "&".join(
                f"{quote(name, safe='-_.~')}="
                + (HIDDEN if is_secret_param(name) else quote(value, safe="-_.~:/"))
                for name, value in pairs
            )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact_text(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Free text with every URL in it masked (`mask_url`) and each of `secrets` (strings of 4
    characters or more) replaced by its masked form."""
    if "://" in text:
        text = _URL.sub(lambda match: mask_url(match.group()), text)
    for secret in secrets:
        if secret and len(secret) >= 4 and secret in text:
            text = text.replace(secret, mask_secret(secret))
    return text


def url_secrets(url: str) -> tuple[str, ...]:
    """The credentials written into a URL: its userinfo password (the user name when it comes
    alone: then it is the token), and the values of
    its secret-looking query parameters (raw and percent-encoded, as they may appear)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ()
    found: list[str] = []
    if parts.password:
        found.append(parts.password)
    elif parts.username:  # a token passed as the user name alone
        found.append(parts.username)
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if value and is_secret_param(name):
            found.append(value)
            encoded = quote(value, safe="")
            if encoded != value:
                found.append(encoded)
    return tuple(secret for secret in found if len(secret) >= 4)
