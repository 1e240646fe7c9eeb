"""`firsttoken ask` through run(args, config), against the demo endpoint over loopback."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest
from helpers.cli import ask_args
from helpers.client import TEST_KEY, closed_port, demo, fault_url

from tui.commands import ask
from tui.config import Config
from tui.engine.store.database import Store

JSON_KEYS = {
    "status", "error", "model", "streamed", "ttfb_ms", "ttft_ms", "total_ms", "tpot_ms",
    "itl_p50_ms", "itl_p95_ms", "output_tokens", "output_tokens_per_s", "prompt_tokens", "trim",
    "retries", "simulated", "ttft_level", "request_class", "target_met", "finish_reason", "reply",
}  # fmt: skip


@pytest.fixture(scope="module")
def instant():
    with demo("instant") as server:
        yield server


def _args(prompt: str | None = "hello, reply 6 tokens", **changes: object) -> argparse.Namespace:
    return ask_args(prompt, **changes)


def _config(base_url: str | None = None, **changes: object) -> Config:
    values: dict[str, object] = {"demo_preset": "instant", "max_retries": 0}
    if base_url is not None:
        values.update(base_url=base_url, api_key=TEST_KEY)
    values.update(changes)
    return Config(**values)  # type: ignore[arg-type]


def _run(capsys, args: argparse.Namespace, config: Config) -> tuple[int, str, str]:
    code = ask.run(args, config)
    out, err = capsys.readouterr()
    return code, out, err


def test_reply_on_stdout_summary_on_stderr(capsys, instant) -> None:
    code, out, err = _run(capsys, _args(), _config(instant.base_url))
    assert code == 0
    assert out.strip() and out.endswith("\n")
    (summary,) = err.strip().splitlines()
    assert summary.startswith("TTFT ") and "total" in summary and "6 out" in summary
    assert "trim on" in summary and "\x1b" not in summary  # stderr is not a terminal here


def test_demo_endpoint_notice_and_simulated_label(capsys) -> None:
    code, out, err = _run(capsys, _args(), _config())
    assert code == 0 and out.strip()
    lines = err.strip().splitlines()
    assert lines[0].startswith("No API key or base_url configured: using the embedded demo")
    assert "http://127.0.0.1:" in lines[0] and "simulated latency, preset instant" in lines[0]
    assert lines[-1].endswith("simulated")


def test_json_contract(capsys, instant) -> None:
    code, out, err = _run(capsys, _args(json=True), _config(instant.base_url))
    assert code == 0 and err == ""
    payload = json.loads(out)  # exactly one JSON object on stdout
    assert payload.keys() >= JSON_KEYS
    assert payload["status"] == "ok" and payload["error"] is None
    assert payload["streamed"] is True and payload["output_tokens"] == 6
    assert payload["ttfb_ms"] <= payload["ttft_ms"] <= payload["total_ms"]
    assert set(payload["prompt_tokens"]) >= {"estimated", "usage"}
    assert payload["prompt_tokens"]["usage"] == instant.requests[-1]["prompt_tokens"]
    assert payload["trim"] == {
        "enabled": True,
        "tokens_before": payload["trim"]["tokens_before"],
        "tokens_after": payload["trim"]["tokens_after"],
        "dropped": [],
    }
    assert payload["reply"] and payload["simulated"] is False
    # Where TTFT went: phases in order, adding up to it; a fresh process's first connection.
    phases = payload["phases_ms"]
    assert list(phases) == ["connect", "request_sent", "response_head", "first_byte", "first_token"]
    assert sum(phases.values()) == pytest.approx(payload["ttft_ms"])
    assert payload["connection_reused"] is False and payload["adjustments"] == []


def test_json_no_stream_labels_ttft_equals_total(capsys, instant) -> None:
    code, out, _ = _run(capsys, _args(json=True, stream=False), _config(instant.base_url))
    payload = json.loads(out)
    assert code == 0 and payload["streamed"] is False
    assert payload["ttft_ms"] == payload["total_ms"]
    assert instant.requests[-1]["stream"] is False


def test_no_stream_summary_says_ttft_is_total(capsys, instant) -> None:
    code, _, err = _run(capsys, _args(stream=False), _config(instant.base_url))
    assert code == 0 and "TTFT=total" in err


def test_stream_default_comes_from_the_config(capsys, instant) -> None:
    _run(capsys, _args(), _config(instant.base_url, streaming=False))
    assert instant.requests[-1]["stream"] is False


def test_prompt_from_stdin(capsys, monkeypatch, instant) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("from stdin, reply 3 tokens\n"))
    code, out, _ = _run(capsys, _args(None, json=True), _config(instant.base_url))
    assert code == 0 and json.loads(out)["output_tokens"] == 3
    assert instant.requests[-1]["messages"][-1]["content"] == "from stdin, reply 3 tokens"


def test_no_prompt_at_all_is_a_usage_error(capsys, monkeypatch, instant) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out, err = _run(capsys, _args(None), _config(instant.base_url))
    assert code == 2 and out == ""
    assert err.startswith("firsttoken: error: no prompt") and err.count("\n") == 1


def test_messages_file_with_prompt_appended(capsys, tmp_path: Path, instant) -> None:
    history = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "earlier"},
        {"role": "assistant", "content": "answer"},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(history))
    code, _, _ = _run(
        capsys, _args("and now, reply 2 tokens", messages=path), _config(instant.base_url)
    )
    assert code == 0
    sent = instant.requests[-1]["messages"]
    assert sent[:3] == history and sent[3] == {"role": "user", "content": "and now, reply 2 tokens"}


def test_trim_with_budget_drops_history(capsys, tmp_path, instant) -> None:
    history = [{"role": "system", "content": "sys"}]
    for i in range(30):
        history.append({"role": "user", "content": f"question {i} " + "filler " * 30})
        history.append({"role": "assistant", "content": f"answer {i} " + "filler " * 30})
    path = tmp_path / "long.json"
    path.write_text(json.dumps(history))
    code, out, _ = _run(
        capsys, _args("latest, reply 2 tokens", messages=path, json=True, budget=400),
        _config(instant.base_url),
    )  # fmt: skip
    payload = json.loads(out)
    assert code == 0 and payload["trim"]["enabled"] is True
    assert payload["trim"]["tokens_before"] > 400 >= payload["trim"]["tokens_after"]
    assert (
        payload["trim"]["dropped"] and {"index", "reason"} <= payload["trim"]["dropped"][0].keys()
    )
    sent = instant.requests[-1]["messages"]
    assert sent[0]["content"] == "sys" and sent[-1]["content"] == "latest, reply 2 tokens"
    assert len(sent) == len(history) + 1 - len(payload["trim"]["dropped"])


def test_no_trim_sends_everything(capsys, tmp_path, instant) -> None:
    history = [{"role": "user", "content": "old " * 500}, {"role": "assistant", "content": "x"}]
    path = tmp_path / "h.json"
    path.write_text(json.dumps(history))
    code, out, _ = _run(
        capsys, _args("new", messages=path, json=True, trim=False, budget=50),
        _config(instant.base_url),
    )  # fmt: skip
    payload = json.loads(out)
    assert code == 0 and payload["trim"]["enabled"] is False and payload["trim"]["dropped"] == []
    assert len(instant.requests[-1]["messages"]) == 3


@pytest.mark.parametrize(
    ("spec", "kind"),
    [("401", "auth"), ("context", "context_length"), ("500", "server"), ("badjson", "bad_json")],
)
def test_failed_request_exit_1_one_line(capsys, instant, spec, kind) -> None:
    code, _, err = _run(capsys, _args(), _config(fault_url(instant, spec)))
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert last.startswith("firsttoken: error: ") and "Traceback" not in err
    assert TEST_KEY not in err
    code, out, _ = _run(capsys, _args(json=True), _config(fault_url(instant, spec)))
    payload = json.loads(out)
    assert code == 1 and payload["status"] == "error" and payload["error"]["kind"] == kind
    assert payload["error"]["message"]


def test_connection_refused_exit_1(capsys) -> None:
    port = closed_port()
    code, _, err = _run(capsys, _args(), _config(f"http://127.0.0.1:{port}/v1"))
    assert code == 1 and f"127.0.0.1:{port}" in err.strip().splitlines()[-1]


def test_stalled_and_early_exit_1_keeping_partial(capsys, instant) -> None:
    config = _config(fault_url(instant, "stall-3000"), chunk_timeout_ms=100, stall_timeout_ms=200)
    code, out, err = _run(capsys, _args("reply 20 tokens"), config)
    assert code == 1 and out.strip() and "stalled" in err
    assert "raise stall_timeout_ms (default 200) under [llm.streaming] in config.toml" in err
    code, out, err = _run(capsys, _args(json=True), _config(fault_url(instant, "early")))
    payload = json.loads(out)
    assert code == 1 and payload["status"] == "ended_early" and payload["reply"]


def test_records_are_saved_with_the_raw_reply(capsys, instant) -> None:
    code, out, _ = _run(capsys, _args(json=True), _config(instant.base_url))
    payload = json.loads(out)
    assert code == 0
    with Store() as store:
        (row,) = [r for r in store.records() if r["id"] == payload["id"]]
    assert row["reply_text"] == payload["reply"] and row["ttft_ms"] == payload["ttft_ms"]
    assert TEST_KEY not in json.dumps(row)


def test_records_not_saved_when_logging_is_off(capsys, instant) -> None:
    _, out, _ = _run(capsys, _args(json=True), _config(instant.base_url, log_every_request=False))
    payload = json.loads(out)
    with Store() as store:
        assert all(r["id"] != payload["id"] for r in store.records())
