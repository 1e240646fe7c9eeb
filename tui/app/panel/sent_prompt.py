"""The panel's "last sent" line: the size of the prompt the last request carried, from the best
count the app has of it. The server's `usage` when it sent one; a cancelled reply, or a server
that never sends usage (llama.cpp ignores include_usage), still sent a prompt the app counted."""

from __future__ import annotations

from dataclasses import dataclass

from tui.engine.metrics.record import RequestRecord
from tui.engine.tokens.server_counts import SERVER, usage_agrees


@dataclass(frozen=True)
class SentPrompt:
    tokens: int
    source: str  # what counted it, as the panel names it: usage, server or local
    exact: bool  # False: an estimate, shown with ≈


def sent_prompt(record: RequestRecord | None) -> SentPrompt | None:
    """The last request's prompt size (None: nothing was sent, or nothing counted it)."""
    if record is None:
        return None
    usage, server = record.prompt_tokens_usage, record.prompt_tokens_server
    if usage is not None:
        # Usage wins; where it contradicts what the app counted, the gap is said.
        counted = server if server is not None else record.prompt_tokens_estimated
        if usage_agrees(counted, usage) is False:
            return SentPrompt(usage, f"usage; counted ≈{counted:,}", True)
        return SentPrompt(usage, "usage", True)
    if server is not None:
        # Exact only as the server's count of the templated prompt (llama.cpp, vLLM).
        return SentPrompt(server, "server", record.prompt_tokens_source == SERVER)
    if record.ttfb_ms is None:
        return None  # no answer at all: whether it arrived is not known
    counted = record.prompt_tokens_estimated
    if counted is None:
        counted = record.tokens_after
    if counted is None:
        return None
    return SentPrompt(counted, "local", False)
