"""The panel's "last sent" line: the size of the prompt the last request carried, from the best
count the app has of it. The server's `usage` when it sent one; a cancelled reply, or a server
that never sends usage (llama.cpp ignores include_usage), still sent a prompt the app counted."""

from __future__ import annotations

from dataclasses import dataclass

from tui.engine.metrics.record import RequestRecord


@dataclass(frozen=True)
class SentPrompt:
    tokens: int
    source: str  # what counted it, as the panel names it: usage, server or local
    exact: bool  # False: an estimate, shown with ≈


def sent_prompt(record: RequestRecord | None) -> SentPrompt | None:
    """The last request's prompt size (None: nothing was sent, or nothing counted it)."""
    if record is None:
        return None
    if record.prompt_tokens_usage is not None:
        return SentPrompt(record.prompt_tokens_usage, "usage", True)
    if record.prompt_tokens_server is not None:
        return SentPrompt(record.prompt_tokens_server, "server", True)
    if record.ttfb_ms is None:
        return None  # no answer at all: whether it arrived is not known
    counted = record.prompt_tokens_estimated
    if counted is None:
        counted = record.tokens_after
    if counted is None:
        return None
    return SentPrompt(counted, "local", False)
