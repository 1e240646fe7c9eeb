"""Terminal neutralisation of model output, the summary line and the --json payload."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.commands.ask_output import TerminalSanitizer, json_payload, sanitize, summary_line
from tui.engine.metrics import DroppedMessage, RequestRecord, RequestStatus, TtftLevel

ATTACKS = [
    ("red \x1b[31mtext\x1b[0m", "red text"),
    ("title \x1b]0;pwned\x07done", "title done"),
    ("osc-st \x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "osc-st link"),
    ("clear\x1b[2J\x1b[H screen", "clear screen"),
    ("bell\x07 back\x08space", "bell backspace"),
    ("c1 \x9b31mcsi", "c1 csi"),
    ("cr\roverwrite", "croverwrite"),
    ("keeps\ttab\nand newline 你好", "keeps\ttab\nand newline 你好"),
    ("esc-other \x1bcreset", "esc-other reset"),
]


@pytest.mark.parametrize(("raw", "clean"), ATTACKS)
def test_sanitize(raw: str, clean: str) -> None:
    assert sanitize(raw) == clean


@pytest.mark.parametrize(("raw", "clean"), ATTACKS)
def test_sequences_split_across_deltas_are_still_caught(raw: str, clean: str) -> None:
    for cut in range(len(raw) + 1):
        sanitizer = TerminalSanitizer()
        out = sanitizer.feed(raw[:cut]) + sanitizer.feed(raw[cut:]) + sanitizer.flush()
        assert out == clean, (cut, out)


@given(st.lists(st.text(alphabet=st.sampled_from("ab\x1b[]0;m\x07\\\n\t\x9b\x9d\r"), max_size=8)))
def test_nothing_dangerous_ever_gets_through(pieces: list[str]) -> None:
    sanitizer = TerminalSanitizer()
    out = "".join(sanitizer.feed(p) for p in pieces) + sanitizer.flush()
    assert not any(ord(c) < 32 and c not in "\n\t" for c in out)
    assert not any(0x7F <= ord(c) <= 0x9F for c in out)


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
        "TTFT 212 ms · total 2.31 s · TPOT 16.4 ms · 61.2 tok/s · 118 out · prompt 412 (≈) · "
        "trim off · simulated"
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
    assert "trim on 8200→5800 (-1 msg)" in line and "2 retries" in line


def test_json_payload_is_serialisable_and_nested() -> None:
    record = _record(trim_enabled=True, dropped=[DroppedMessage(2, "history: middle")],
                     prompt_tokens_usage=400, status=RequestStatus.ERROR, error_kind="auth",
                     error_message="the key was refused")  # fmt: skip
    payload = json.loads(json.dumps(json_payload(record, "reply")))
    assert payload["error"] == {"kind": "auth", "message": "the key was refused"}
    assert payload["prompt_tokens"]["estimated"] == 412 and payload["prompt_tokens"]["usage"] == 400
    assert payload["trim"]["dropped"] == [{"index": 2, "reason": "history: middle"}]
    assert payload["status"] == "error" and payload["ttft_level"] == "ok"


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
