"""Secrets shown masked: the one rule for every message, record and screen that names a key."""

from __future__ import annotations

HIDDEN = "****"


def mask_secret(secret: str) -> str:
    """ "sk-…abcd": a known prefix and at most the last 4 characters; short keys fully hidden."""
    prefix = "sk-" if secret.startswith("sk-") else ""
    body = secret[len(prefix) :]
    if len(body) < 12:  # too short to reveal any of it without giving much away
        return HIDDEN
    return f"{prefix}…{body[-4:]}"
