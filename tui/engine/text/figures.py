"""Figures as one-line text for people: a duration in ms or s, the precision its size needs."""

from __future__ import annotations


def duration(ms: float | None) -> str:
    """`8.4 ms`, `420 ms`, `3.12 s`; `–` when unknown."""
    if ms is None:
        return "–"
    if ms < 1000:
        return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"
    return f"{ms / 1000:.2f} s"


def per_token(ms: float | None) -> str:
    """A time per token (TPOT): `16.7 ms`; `—` when unknown."""
    return "—" if ms is None else f"{ms:.1f} ms"
