"""What some models refuse in a chat request, learned from their 400 answers and remembered
(and which endpoints are llama.cpp, learned from their replies).

OpenAI's reasoning models answer HTTP 400 to `max_tokens` ("Use 'max_completion_tokens'
instead", param `max_tokens`) and to a temperature other than the default ("Only the default (1)
value is supported", param `temperature`). The client sends the request again once with the body
adjusted, and the adjustment is kept per endpoint and model in a small JSON file, so the next
request (in this run or a later one) is sent right from the start.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# Adjustments, in the order they are applied; the names appear in records and `ask --json`.
MAX_COMPLETION_TOKENS = "max_completion_tokens"  # max_completion_tokens sent for max_tokens
DEFAULT_TEMPERATURE = "default_temperature"  # temperature left out: the model's default
# llama.cpp's `return_progress` left out: a server that refuses fields it does not know.
NO_PROGRESS = "no_return_progress"
ADJUSTMENTS = (MAX_COMPLETION_TOKENS, DEFAULT_TEMPERATURE, NO_PROGRESS)
# Not an adjustment but what a reply showed: llama.cpp's `timings`, so its prompt progress is
# worth asking for from then on (a server that refuses the field still teaches NO_PROGRESS).
SPEAKS_LLAMACPP = "speaks_llamacpp"
LEARNED = (SPEAKS_LLAMACPP, *ADJUSTMENTS)


def adjusted_body(body: dict[str, Any], adjustments: Iterable[str]) -> dict[str, Any]:
    """`body` as a model with these adjustments takes it (a new dict; `body` is unchanged)."""
    adjusted = dict(body)
    for adjustment in adjustments:
        if adjustment == MAX_COMPLETION_TOKENS and "max_tokens" in adjusted:
            adjusted["max_completion_tokens"] = adjusted.pop("max_tokens")
        elif adjustment == DEFAULT_TEMPERATURE:
            adjusted.pop("temperature", None)
        elif adjustment == NO_PROGRESS:
            adjusted.pop("return_progress", None)
    return adjusted


def _error_fields(body: object) -> tuple[str, str, str]:
    """(param, code, message) of an OpenAI-style error body, lower-cased; empty when absent."""
    inner = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(inner, dict):
        return "", "", ""

    def text(key: str) -> str:
        value = inner.get(key)
        return value.lower() if isinstance(value, str) else ""

    return text("param"), text("code"), text("message")


def adjustment_asked(status: int, body: object, applied: Iterable[str]) -> str | None:
    """The adjustment a 400 answer asks for (one not applied yet), or None."""
    if status != 400:
        return None
    done = set(applied)
    param, code, message = _error_fields(body)
    if NO_PROGRESS not in done and (param == "return_progress" or "return_progress" in message):
        return NO_PROGRESS
    if MAX_COMPLETION_TOKENS not in done and (
        param == "max_tokens" or ("max_tokens" in message and "max_completion_tokens" in message)
    ):
        return MAX_COMPLETION_TOKENS
    refused = code in ("unsupported_value", "unsupported_parameter") or "unsupported" in message
    if DEFAULT_TEMPERATURE not in done and (
        (param == "temperature" and refused)
        or (
            "temperature" in message and ("only the default" in message or "not support" in message)
        )
    ):
        return DEFAULT_TEMPERATURE
    return None


class DialectMemory:
    """Adjustments per endpoint and model, kept in `path` (JSON) when one is given.

    A file that cannot be read starts empty; one that cannot be written keeps the adjustment for
    this run only. Neither is an error: the next 400 teaches it again.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._known: dict[str, list[str]] | None = None

    @staticmethod
    def _key(endpoint: str, model: str) -> str:
        return f"{endpoint} {model}"

    def _load(self) -> dict[str, list[str]]:
        if self._known is None:
            known: dict[str, list[str]] = {}
            if self.path is not None:
                try:
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    data = {}
                if isinstance(data, dict):
                    for key, value in data.items():
                        if isinstance(key, str) and isinstance(value, list):
                            known[key] = [item for item in value if item in LEARNED]
            self._known = known
        return self._known

    def get(self, endpoint: str, model: str) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._load().get(self._key(endpoint, model), ()))

    def learn(self, endpoint: str, model: str, adjustment: str) -> None:
        with self._lock:
            known = self._load()
            learned = known.setdefault(self._key(endpoint, model), [])
            if adjustment in learned:
                return
            learned.append(adjustment)
            learned.sort(key=LEARNED.index)
            self._write(known)

    def _write(self, known: dict[str, list[str]]) -> None:
        path = self.path
        if path is None:
            return
        from tui.locations import write_atomically

        # Kept for this run if it cannot be written: the file is a convenience, not a record.
        with contextlib.suppress(OSError):
            write_atomically(path, json.dumps(known, indent=2, sort_keys=True))
