"""`firsttoken history` and `firsttoken --resume` in a subprocess, over a history file written
through the real Store; and the OpenTelemetry GenAI export of a record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import firsttoken

from tui.engine.metrics.otel import otel_attributes
from tui.engine.metrics.record import RequestRecord, RequestStatus
from tui.engine.store.database import Store
from tui.locations import history_db_path


def _record(model: str, ttft_ms: float | None, **changes: object) -> RequestRecord:
    record = RequestRecord(model=model, endpoint_host="api.example.com:443", streamed=True)
    record.ttft_ms = ttft_ms
    record.total_ms = None if ttft_ms is None else ttft_ms + 900.0
    record.tpot_ms = 15.0
    record.output_tokens = 61
    record.prompt_tokens_usage = 1234
    record.finish_reason = "stop"
    for name, value in changes.items():
        setattr(record, name, value)
    return record


@pytest.fixture
def two_chats(isolated_home: Path) -> tuple[int, int]:
    with Store(history_db_path()) as store:
        first = store.new_chat("why is prefill slow?", "qwen-7b")
        store.add_message(first, {"role": "user", "content": "why is prefill slow?"})
        store.add_message(first, {"role": "assistant", "content": "it grows with the prompt"})
        phases = {"dns": 12.0, "connect": 30.0, "tls": 40.0, "request_sent": 0.1,
                  "response_head": 600.0, "first_byte": 20.0, "first_token": 109.9}  # fmt: skip
        kept = _record(
            "qwen-7b",
            812.0,
            started_at_epoch=1000.0,
            phases_ms=phases,
            connection_reused=False,
            ttfb_ms=702.1,
        )
        store.save_record(kept, "it grows", first)
        second = store.new_chat("hello\nthere", "gpt-4o")
        store.add_message(second, {"role": "user", "content": "hello"})
        failed = _record(
            "gpt-4o",
            None,
            status=RequestStatus.ERROR,
            error_kind="rate_limited",
            started_at_epoch=2000.0,
        )
        store.save_record(failed, "", second)
    return first, second


@pytest.mark.e2e
def test_no_history_yet_says_so_and_creates_nothing(isolated_home: Path) -> None:
    result = firsttoken("history")
    assert result.returncode == 0
    assert "no history yet" in result.stderr and result.stdout == ""
    assert not history_db_path().exists()


@pytest.mark.e2e
def test_records_table_oldest_first(two_chats: tuple[int, int]) -> None:
    result = firsttoken("history")
    assert result.returncode == 0, result.stderr
    header, older, newer = result.stdout.splitlines()
    assert header.split()[:3] == ["started", "model", "status"]
    assert "qwen-7b" in older and "812 ms" in older and "1.71 s" in older and "15.0 ms" in older
    assert "gpt-4o" in newer and "error" in newer
    assert older.split()[-1] == str(two_chats[0]) and newer.split()[-1] == str(two_chats[1])


@pytest.mark.e2e
def test_chats_table_and_one_chats_records(two_chats: tuple[int, int]) -> None:
    first, second = two_chats
    chats = firsttoken("history", "--chats")
    assert chats.returncode == 0, chats.stderr
    lines = chats.stdout.splitlines()
    assert lines[1].split()[0] == str(second)  # newest first
    assert lines[1].rstrip().endswith("hello there")  # one line per chat
    assert lines[2].split()[0] == str(first) and "why is prefill slow?" in lines[2]

    only = firsttoken("history", "--chat", str(first), "--json")
    assert only.returncode == 0, only.stderr
    (line,) = only.stdout.splitlines()
    data = json.loads(line)
    assert data["chat_id"] == first and data["ttft_ms"] == 812.0
    assert data["reply_text"] == "it grows"


@pytest.mark.e2e
def test_otel_export_names_and_units(two_chats: tuple[int, int]) -> None:
    result = firsttoken("history", "--otel")
    assert result.returncode == 0, result.stderr
    older, newer = (json.loads(line) for line in result.stdout.splitlines())
    # The client's TTFT is firsttoken's; the server's own is what it reported (nothing here).
    assert older["firsttoken.time_to_first_token"] == pytest.approx(0.812)
    assert older["gen_ai.server.time_to_first_token"] is None
    assert older["gen_ai.client.operation.duration"] == pytest.approx(1.712)
    assert older["gen_ai.request.model"] == "qwen-7b"
    assert older["firsttoken.chat_id"] == two_chats[0]
    assert older["error.type"] is None
    assert newer["error.type"] == "rate_limited"
    assert newer["firsttoken.time_to_first_token"] is None
    # The phases: OpenTelemetry's names where they exist, firsttoken.* for the rest.
    assert older["gen_ai.client.operation.time_to_first_chunk"] == pytest.approx(0.7021)
    assert older["dns.lookup.duration"] == pytest.approx(0.012)
    assert older["firsttoken.phase.tls"] == pytest.approx(0.040)
    assert older["firsttoken.phase.first_token"] == pytest.approx(0.1099)
    assert older["firsttoken.phase.retries"] is None
    assert older["firsttoken.connection.reused"] is False
    assert newer["dns.lookup.duration"] is None and newer["firsttoken.adjustments"] == []


@pytest.mark.e2e
def test_json_lines_carry_the_phases_in_order(two_chats: tuple[int, int]) -> None:
    result = firsttoken("history", "--json")
    assert result.returncode == 0, result.stderr
    older, newer = (json.loads(line) for line in result.stdout.splitlines())
    assert list(older["phases_ms"]) == [
        "dns", "connect", "tls", "request_sent", "response_head", "first_byte", "first_token",
    ]  # fmt: skip
    assert older["connection_reused"] is False and older["adjustments"] == []
    assert newer["phases_ms"] is None


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("history", "--chat", "99"), "--chat 99"),
        (("history", "--otel", "--chats"), "--otel"),
        (("history", "--limit", "0"), "--limit"),
        (("history", "--conversation"), "--conversation needs --chat"),
        (("--resume", "99"), "--resume 99"),
    ],
)
@pytest.mark.e2e
def test_usage_errors_name_the_flag(two_chats: tuple[int, int], args, names: str) -> None:
    result = firsttoken(*args)
    assert result.returncode == 2
    assert names in result.stderr and "Traceback" not in result.stderr


@pytest.mark.e2e
def test_resume_with_nothing_saved_or_with_messages_is_refused(
    isolated_home: Path, tmp_path: Path
) -> None:
    result = firsttoken("--resume")
    assert result.returncode == 2
    assert "no saved chats yet" in result.stderr
    messages = tmp_path / "m.json"
    messages.write_text('[{"role": "user", "content": "hi"}]')
    result = firsttoken("--resume", "--messages", str(messages))
    assert result.returncode == 2
    assert "use one of them" in result.stderr


def test_otel_attributes_of_a_record() -> None:
    record = _record("m", 250.0, endpoint_host="[::1]:8080", retries=2, trim_enabled=True)
    attributes = otel_attributes(record)
    assert attributes["server.address"] == "::1" and attributes["server.port"] == 8080
    assert attributes["gen_ai.server.time_per_output_token"] == pytest.approx(0.015)
    assert attributes["gen_ai.client.token.usage"] == {"input": 1234, "output": 61}
    assert attributes["gen_ai.response.finish_reasons"] == ["stop"]
    assert attributes["firsttoken.retries"] == 2 and attributes["firsttoken.trim.enabled"]
    assert otel_attributes(_record("m", 1.0, endpoint_host="localhost"))["server.port"] is None
    assert "api_key" not in json.dumps(attributes)


def test_otel_attributes_of_the_servers_half() -> None:
    server = {
        "source": ["usage", "timings"],
        "prompt_tokens": 1234,
        "cached_tokens": 1000,
        "prefilled_tokens": 234,
        "reasoning_tokens": 7,
        "queue_ms": None,
        "prefill_ms": 180.0,
        "decode_ms": 900.0,
        "decoded_tokens": 61,
    }
    record = _record("m", 250.0, server=server, reasoning_tokens=7, ttfb_ms=240.0)
    attributes = otel_attributes(record)
    assert attributes["gen_ai.server.time_to_first_token"] == pytest.approx(0.18)
    assert attributes["gen_ai.client.operation.time_to_first_chunk"] == pytest.approx(0.24)
    assert attributes["firsttoken.time_to_first_token"] == pytest.approx(0.25)
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == 1000
    assert attributes["gen_ai.usage.reasoning.output_tokens"] == 7
    assert attributes["firsttoken.ttft_part.prefill"] == pytest.approx(0.18)
    assert attributes["firsttoken.ttft_part.network_and_queue"] == pytest.approx(0.07)


@pytest.mark.e2e
def test_a_chats_conversation_round_trips_through_ask(two_chats: tuple[int, int]) -> None:
    exported = firsttoken("history", "--chat", str(two_chats[0]), "--conversation")
    assert exported.returncode == 0, exported.stderr
    messages = json.loads(exported.stdout)
    assert [m["role"] for m in messages] == ["user", "assistant"]
    path = history_db_path().parent / "conversation.json"
    path.write_text(exported.stdout)
    # What --messages reads: ask accepts it (a usage error would exit 2 before any request).
    checked = firsttoken("ask", "--messages", str(path), "--base-url", "http://127.0.0.1:9/v1")
    assert checked.returncode == 1, checked.stderr  # the request fails (nothing listens)
    assert "connection" in checked.stderr


@pytest.mark.e2e
def test_an_unreadable_history_file_is_one_line_naming_it(isolated_home: Path) -> None:
    path = history_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    result = firsttoken("history")
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith("firsttoken: error:") and str(path) in line
    assert path.read_bytes().startswith(b"this is not a database")  # left as it was
