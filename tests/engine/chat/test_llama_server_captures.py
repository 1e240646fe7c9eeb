"""What llama.cpp's own `llama-server` sent, replayed byte for byte over real HTTP
(tests/real_server/captures/llama-server-b11434/): its prompt progress comes as PromptProgress
events before the first token, the role-only chunks that carry it (and the one after it) never
stop the TTFT clock, the record keeps the server's prefill, cache and rate; with a draft model,
the share of drafted tokens accepted is the server's own count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.client import collect, make_client, make_request
from helpers.raw_server import RawServer, response

from tui.engine.chat.events import FirstToken, PromptProgress
from tui.engine.metrics.record import RequestStatus

CAPTURES = Path(__file__).parents[2] / "real_server" / "captures" / "llama-server-b11434"


def events_of(name: str) -> list[dict[str, Any]]:
    """The capture's SSE events, parsed (data lines other than [DONE])."""
    text = (CAPTURES / f"{name}.sse").read_text(encoding="utf-8")
    data = [line.removeprefix("data: ") for line in text.splitlines() if line.startswith("data: ")]
    return [json.loads(d) for d in data if d != "[DONE]"]


def timings_of(name: str) -> dict[str, Any]:
    return next(e["timings"] for e in reversed(events_of(name)) if "timings" in e)


async def replay(name: str) -> tuple[list[Any], Any]:
    body = (CAPTURES / f"{name}.sse").read_bytes()
    pieces = [p + b"\n\n" for p in body.split(b"\n\n") if p]  # an event a write, as it came

    def answer(_head: bytes, _body: bytes) -> list[bytes]:
        head = response("200 OK", b"", "Content-Type: text/event-stream", length=False)
        return [head, *pieces]

    async with RawServer(answer) as server:
        client = make_client(server.base_url, prompt_progress=True)
        events, finished = await collect(client, make_request("a long prompt", stream=True))
        [(_, sent)] = server.requests
    assert json.loads(sent)["return_progress"] is True
    return events, finished


async def test_the_prompt_progress_comes_before_the_first_token_and_never_stops_ttft() -> None:
    events, finished = await replay("chat_stream_progress")
    captured = [e["prompt_progress"] for e in events_of("chat_stream_progress")
                if "prompt_progress" in e]  # fmt: skip
    progress = [e for e in events if isinstance(e, PromptProgress)]
    first_token = next(i for i, e in enumerate(events) if isinstance(e, FirstToken))
    assert len(progress) == len(captured) == 4
    assert [p.sample.processed for p in progress] == [c["processed"] for c in captured]
    assert all(events.index(p) < first_token for p in progress)
    record = finished.record
    assert record.status is RequestStatus.OK and record.output_tokens == 8
    timings = timings_of("chat_stream_progress")
    assert record.server is not None
    assert record.server["prefilled_tokens"] == timings["prompt_n"] == 1819
    assert record.server["cached_tokens"] == timings["cache_n"] == 0
    assert record.prefill_tokens_per_s == pytest.approx(
        1000 * timings["prompt_n"] / timings["prompt_ms"]
    )
    assert record.prompt_progress is not None and len(record.prompt_progress) == 4
    assert record.draft_acceptance is None  # no draft model: no figure


async def test_a_cached_prompts_progress_counts_the_cached_part() -> None:
    events, finished = await replay("chat_stream_progress_cached")
    samples = [e.sample for e in events if isinstance(e, PromptProgress)]
    assert [(s.cached, s.processed, s.total) for s in samples] == [
        (1818, 1818, 1819),
        (1818, 1819, 1819),
    ]
    assert finished.record.server is not None
    assert finished.record.server["cached_tokens"] == 1818


async def test_a_draft_models_work_is_the_servers_own_count() -> None:
    _, finished = await replay("chat_stream_draft")
    timings = timings_of("chat_stream_draft")
    record = finished.record
    assert record.status is RequestStatus.OK and record.server is not None
    assert (record.server["draft_tokens"], record.server["draft_accepted"]) == (47, 40)
    assert record.draft_acceptance == pytest.approx(
        timings["draft_n_accepted"] / timings["draft_n"]
    )
