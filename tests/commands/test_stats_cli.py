"""`firsttoken stats` over a history with known figures: the tables, the plots, --json's
groups, the filters, and the one-line errors."""

from __future__ import annotations

import json
import time

import pytest
from helpers.cli import firsttoken

from tui.cli import main
from tui.engine.metrics.record import RequestRecord, RequestStatus
from tui.engine.store.database import Store
from tui.locations import history_db_path

NOW = time.time()


def _save(store: Store, model: str, host: str, ttft: float | None, *, ago_s: float,
          ok: bool = True, streamed: bool = True, met: bool | None = None) -> None:  # fmt: skip
    record = RequestRecord(model=model, endpoint_host=host, streamed=streamed,
                           started_at_epoch=NOW - ago_s)  # fmt: skip
    if ok:
        record.ttft_ms, record.total_ms, record.tpot_ms = ttft, (ttft or 0) + 1000.0, 12.0
        record.target_met = met
    else:
        record.status, record.error_kind = RequestStatus.ERROR, "http_5xx"
    store.save_record(record, "reply")


@pytest.fixture
def history() -> None:
    with Store(history_db_path()) as store:
        for n in range(1, 11):  # TTFTs 100..1000 ms over the last 10 hours
            _save(store, "qwen-7b", "gpu.lan:8000", 100.0 * n, ago_s=3600.0 * n, met=n <= 5)
        _save(store, "qwen-7b", "gpu.lan:8000", None, ago_s=60.0, ok=False)
        _save(store, "qwen-7b", "gpu.lan:8000", 9000.0, ago_s=30.0, streamed=False)
        for n in range(1, 4):
            _save(store, "llama-3b", "cpu.lan:8080", 50.0 * n, ago_s=10.0 * n)
        _save(store, "old-model", "gpu.lan:8000", 70.0, ago_s=30 * 86400.0)


def test_json_groups_hold_the_percentiles_and_the_attainment(
    history: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stats", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    groups = {g["model"]: g for g in payload["groups"]}
    assert payload["count"] == 16 and list(groups) == ["qwen-7b", "llama-3b", "old-model"]
    qwen = groups["qwen-7b"]
    assert (qwen["endpoint_host"], qwen["count"], qwen["ok"], qwen["streamed_ok"]) == (
        "gpu.lan:8000",
        12,
        11,
        10,
    )
    # 100..1000 ms: numpy's linear percentiles (the unstreamed 9 s reply is not a TTFT).
    assert qwen["ttft_ms"] == pytest.approx({"p50": 550.0, "p90": 910.0, "p95": 955.0,
                                             "p99": 991.0})  # fmt: skip
    assert qwen["slo"] == {"judged": 10, "met": 5, "attainment": 0.5}
    assert qwen["errors"] == {"http_5xx": 1}
    assert qwen["goodput"]["good"] == 5


def test_filters_keep_the_matching_groups(
    history: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stats", "--json", "--since", "7d"]) == 0
    assert [g["model"] for g in json.loads(capsys.readouterr().out)["groups"]] == [
        "qwen-7b",
        "llama-3b",
    ]
    assert main(["stats", "--json", "--endpoint", "cpu.lan"]) == 0
    assert [g["model"] for g in json.loads(capsys.readouterr().out)["groups"]] == ["llama-3b"]
    assert main(["stats", "--json", "--model", "qwen", "--since", "5h"]) == 0
    (qwen,) = json.loads(capsys.readouterr().out)["groups"]
    assert qwen["streamed_ok"] == 4  # 100..400 ms, within the last five hours


def test_the_tables_and_plots_for_people(history: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--since", "1d"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out  # not a terminal: no colour codes
    first = next(line for line in out.splitlines() if line.startswith("qwen-7b"))
    assert first.split()[:4] == ["qwen-7b", "gpu.lan:8000", "12", "10"]
    assert "550 ms" in first
    assert "50% of 10" in out and "http_5xx 1" in out
    assert "TTFT histogram" in out and "TTFT over time" in out
    assert main(["stats", "--no-plot"]) == 0
    tables_only = capsys.readouterr().out
    assert "TTFT histogram" not in tables_only and "old-model" in tables_only


@pytest.mark.e2e
def test_the_command_runs_as_users_run_it(history: None) -> None:
    done = firsttoken("stats", "--model", "llama")
    assert done.returncode == 0, done.stderr
    assert "llama-3b" in done.stdout and "qwen-7b" not in done.stdout


def test_an_untrusted_model_id_cannot_reach_the_terminal_live(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with Store(history_db_path()) as store:
        _save(store, "evil\x1b]52;c;aGk=\x07\x9b2J", "h:1", 100.0, ago_s=5.0)
        _save(store, "evil\x1b]52;c;aGk=\x07\x9b2J", "h:1", 200.0, ago_s=1.0)
    for flags in ([], ["--json"]):
        assert main(["stats", *flags]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out


def test_usage_errors_and_an_empty_history(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats"]) == 0
    assert "no history yet" in capsys.readouterr().err
    assert main(["stats", "--since", "yesterday"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("firsttoken: error:") and "--since" in err and "7d" in err
    assert len(err.splitlines()) == 1
