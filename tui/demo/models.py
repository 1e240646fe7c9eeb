"""GET /v1/models and /v1/models/<id> of the demo endpoint (faults apply here too)."""

from __future__ import annotations

import asyncio
import json
import time

from tui.demo.exchange import Exchange
from tui.demo.faults import Fault, FaultCounter, error_parts, wait_for_close


async def answer_models(
    ex: Exchange,
    path: str,
    model_ids: list[str],
    fault: Fault | None,
    faults: FaultCounter,
    reader: asyncio.StreamReader,
    context_window: int | None = None,
) -> bool:
    """The model list (or one model card); False when the connection must close.
    `context_window`: played as llama-server states it, in each card's `meta.n_ctx`."""
    if fault is not None and fault.kind == "drop":
        return False
    if fault is not None and fault.kind == "hang":
        await wait_for_close(reader)
        return False
    if (status := faults.status(fault)) is not None:
        message, type_, code, extra = error_parts(status)
        await ex.send_error(status, message, type_, code, extra=extra)
        return True
    created = int(time.time())
    cards = [
        {
            "id": name,
            "object": "model",
            "created": created,
            "owned_by": "firsttoken (simulated)",
        }
        for name in model_ids
    ]
    if context_window is not None:
        for card in cards:
            card["meta"] = {"n_ctx": context_window}
    if path == "/v1/models":
        payload: dict = {"object": "list", "data": cards}
    else:
        name = path.removeprefix("/v1/models/")
        payload = next((c for c in cards if c["id"] == name), {**cards[0], "id": name})
    head_only = ex.request.method == "HEAD"
    await ex.send_full(200, json.dumps(payload).encode(), "application/json", head_only=head_only)
    return True
