"""The summary line and the --json payload (error ones too)."""

from __future__ import annotations

import json

from tui.commands.ask_output import error_payload, json_payload, summary_line
from tui.engine.metrics.record import DroppedMessage, RequestRecord, RequestStatus, TtftLevel


def _record(**changes: object) -> RequestRecord:
    record = RequestRecord(model="m", endpoint_host="h:1", streamed=True, simulated=True)
    values: dict[str, object] = {
        "ttft_ms": 212.0, "total_ms": 2310.0, "tpot_ms": 16.4, "output_tokens_per_s": 61.2,
        "output_tokens": 118, "output_tokens_source": "usage", "prompt_tokens_estimated": 412,
        "ttft_level": TtftLevel.OK,
    }  # fmt: skip
    values.update(changes)
    for name, value in values.items():
        setattr(record, name, value)
    return record


def test_summary_line() -> None:
    line = summary_line(_record(), color=False)
    assert line == (
        "TTFT 212 ms · total 2.31 s · TPOT 16.4 ms · 61.2 tok/s · 118 out · "
        "prompt ≈412 tokens (the local count) · trim off · simulated"
    )


def test_summary_colours_ttft_by_level_only_when_asked() -> None:
    assert "\x1b[32mTTFT 212 ms\x1b[0m" in summary_line(_record(), color=True)
    warn = _record(ttft_ms=1500.0, ttft_level=TtftLevel.WARN)
    assert "\x1b[33mTTFT 1.50 s\x1b[0m" in summary_line(warn, color=True)
    error = _record(ttft_ms=3000.0, ttft_level=TtftLevel.ERROR)
    assert "\x1b[31m" in summary_line(error, color=True)


def test_summary_non_streaming_and_trim_and_status() -> None:
    record = _record(streamed=False, trim_enabled=True, tokens_before=8200, tokens_after=5800,
                     status=RequestStatus.STALLED, retries=2,
                     dropped=[DroppedMessage(3, "history")])  # fmt: skip
    line = summary_line(record, color=False)
    assert line.startswith("stalled · TTFT=total 212 ms")
    assert "trim on: 8,200 → 5,800 tokens by the local count (1 message dropped)" in line
    assert "2 retries" in line


def test_summary_says_whose_count_each_prompt_size_is() -> None:
    """The server counts the templated prompt, trimming the messages alone: "prompt 9 · trim on
    8→8" gave two sizes without saying which is which."""
    record = _record(prompt_tokens_usage=9, trim_enabled=True, tokens_before=8, tokens_after=8)
    line = summary_line(record, color=False)
    assert "prompt 9 tokens (the server's count)" in line
    assert "trim on: 8 tokens by the local count, within the budget, nothing dropped" in line


def test_json_payload_is_serialisable_and_nested() -> None:
    record = _record(trim_enabled=True, dropped=[DroppedMessage(2, "history: middle")],
                     prompt_tokens_usage=400, status=RequestStatus.ERROR, error_kind="auth",
                     error_message="the key was refused")  # fmt: skip
    payload = json.loads(json.dumps(json_payload(record, "reply")))
    assert payload["error"] == {"kind": "auth", "message": "the key was refused"}
    assert payload["prompt_tokens"]["estimated"] == 412 and payload["prompt_tokens"]["usage"] == 400
    assert payload["trim"]["dropped"] == [{"index": 2, "reason": "history: middle"}]
    assert payload["status"] == "error" and payload["ttft_level"] == "ok"


def test_error_payload_has_every_key_of_the_contract_and_masks_urls() -> None:
    payload = error_payload("usage", "bad --base-url http://u:hunter22@host/v1?api-key=sk-123456")
    assert payload.keys() == json_payload(_record(), "").keys()
    assert payload["status"] == "error"
    assert payload["error"]["kind"] == "usage"
    assert "hunter22" not in payload["error"]["message"]
    assert "sk-123456" not in payload["error"]["message"]
    assert all(value is None for key, value in payload.items() if key not in ("status", "error"))


def test_summary_says_how_the_body_was_adjusted_for_the_model() -> None:
    record = _record(adjustments=["max_completion_tokens", "default_temperature"], retries=2)
    line = summary_line(record, color=False)
    assert line.endswith(
        "2 retries · sent as the model wants: max_completion_tokens for max_tokens, "
        "its default temperature · simulated"
    )


def test_json_payload_carries_the_phases_in_order() -> None:
    phases = {"dns": 3.0, "connect": 1.0, "tls": 9.0, "first_token": 120.0}
    record = _record(phases_ms=phases, connection_reused=False, adjustments=["default_temperature"])
    payload = json.loads(json.dumps(json_payload(record, "reply")))
    assert list(payload["phases_ms"].items()) == list(phases.items())
    assert payload["connection_reused"] is False
    assert payload["adjustments"] == ["default_temperature"]
    assert json_payload(_record(), "")["phases_ms"] is None
