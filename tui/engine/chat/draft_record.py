"""The record a reply is saved under while it streams (by the app and by `ask`), until the
engine's own record replaces it: marked as ended early, so a process killed mid-reply leaves
a record that says so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.engine.metrics.record import RequestRecord, RequestStatus

if TYPE_CHECKING:
    from tui.engine.chat.request import ChatRequest

INTERRUPTED = "interrupted"  # the error kind of a reply whose process stopped before it ended


def draft_record(request: ChatRequest, host: str, simulated: bool, kept: str) -> RequestRecord:
    """An ended-early record for `request`; `kept` says how much of the reply the saves hold."""
    return RequestRecord(
        model=request.model,
        endpoint_host=host,
        streamed=request.stream,
        simulated=simulated,
        status=RequestStatus.ENDED_EARLY,
        error_kind=INTERRUPTED,
        error_message=f"firsttoken stopped before the reply ended: {kept}",
        trim_enabled=request.trim is not None,
        prompt_tokens_estimated=request.prompt_tokens_estimated,
    )
