"""Statistics over kept records: percentiles match numpy's default (linear) method on known
values, TTFT and TPOT come from streamed requests only, SLO attainment, goodput, errors by kind
and the cached share are counted as docs/metrics.md defines them, and the store's rows read
back what was saved."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from tui.engine.metrics.record import RequestRecord, RequestStatus
from tui.engine.metrics.statistics import DEMO_HOST, PERCENTILES, LatencyRow, group_stats, spread
from tui.engine.store.database import Store


def _row(**changes: object) -> LatencyRow:
    values: dict[str, object] = {
        "model": "m", "endpoint_host": "h:1", "started_at_epoch": 1000.0, "ok": True,
        "error_kind": None, "streamed": True, "simulated": False, "ttft_ms": 100.0,
        "total_ms": 1000.0, "tpot_ms": 10.0,
    }  # fmt: skip
    values.update(changes)
    return LatencyRow(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [1, 2, 3, 10, 101, 1000])
def test_percentiles_match_numpys_linear_method(size: int) -> None:
    values = [random.Random(size).lognormvariate(5, 1) for _ in range(size)]
    got = spread(values)
    for q in PERCENTILES:
        assert got[f"p{q}"] == pytest.approx(float(np.percentile(values, q)), rel=1e-12)


def test_no_values_have_no_percentiles() -> None:
    assert spread([]) == {"p50": None, "p90": None, "p95": None, "p99": None}


def test_ttft_is_taken_over_streamed_successes_and_total_over_every_success() -> None:
    rows = [
        _row(ttft_ms=100.0, total_ms=1000.0),
        _row(ttft_ms=300.0, total_ms=2000.0),
        _row(streamed=False, ttft_ms=5000.0, total_ms=5000.0, tpot_ms=None),
        _row(ok=False, error_kind="timeout", ttft_ms=None, total_ms=None),
    ]
    (group,) = group_stats(rows)
    assert (group.count, group.ok, group.streamed_ok) == (4, 3, 2)
    assert group.ttft_ms["p50"] == pytest.approx(200.0)
    assert group.total_ms["p50"] == pytest.approx(2000.0)
    assert group.errors == {"timeout": 1}


def test_attainment_goodput_and_the_cached_share() -> None:
    rows = [
        _row(started_at_epoch=0.0, total_ms=1000.0, target_met=True, prompt_tokens=1000,
             cached_tokens=900),
        _row(started_at_epoch=5.0, total_ms=1000.0, target_met=False, prompt_tokens=1000,
             cached_tokens=100),
        _row(started_at_epoch=9.0, total_ms=1000.0, target_met=True),  # cache unknown
        _row(started_at_epoch=9.5, ok=False, error_kind="http_5xx", total_ms=None),
    ]  # fmt: skip
    (group,) = group_stats(rows)
    assert (group.judged, group.met) == (3, 2)
    assert group.attainment == pytest.approx(2 / 3)
    assert group.span_s == pytest.approx(10.0)  # the first start to the last one's end
    assert group.goodput_per_s == pytest.approx(0.2)
    assert group.cached_share == pytest.approx(0.5)
    payload = group.to_dict()
    assert payload["slo"] == {"judged": 3, "met": 2, "attainment": pytest.approx(2 / 3)}
    assert payload["goodput"]["per_s"] == pytest.approx(0.2)


def test_groups_are_per_model_and_endpoint_and_the_demo_is_one_endpoint() -> None:
    rows = [
        _row(model="a", endpoint_host="x:1"),
        _row(model="a", endpoint_host="y:1"),
        _row(model="a", endpoint_host="y:1"),
        _row(model="d", endpoint_host="127.0.0.1:4001", simulated=True),
        _row(model="d", endpoint_host="127.0.0.1:4002", simulated=True),
    ]
    groups = [(g.model, g.endpoint_host, g.count) for g in group_stats(rows)]
    assert groups == [("a", "y:1", 2), ("d", DEMO_HOST, 2), ("a", "x:1", 1)]


def test_the_store_reads_back_what_statistics_need(tmp_path: Path) -> None:
    with Store(tmp_path / "h.sqlite3") as store:
        chat = store.new_chat("c", "m")
        done = RequestRecord(model="qwen", endpoint_host="gpu:8000", streamed=True,
                             started_at_epoch=2000.0)  # fmt: skip
        done.ttft_ms, done.total_ms, done.tpot_ms = 120.0, 900.0, 9.0
        done.time_to_first_answer_ms, done.target_met = 400.0, True
        done.prompt_tokens_usage, done.server = 2000, {"cached_tokens": 1500}
        store.save_record(done, "reply", chat_id=chat)
        failed = RequestRecord(model="qwen", endpoint_host="gpu:8000", streamed=True,
                               started_at_epoch=1000.0, status=RequestStatus.ERROR,
                               error_kind="timeout")  # fmt: skip
        store.save_record(failed, "", chat_id=chat)
        draft = RequestRecord(model="qwen", endpoint_host="gpu:8000", streamed=True)
        store.save_record(draft, "so far", chat_id=chat, incomplete=True)
        other = RequestRecord(model="llama", endpoint_host="cpu:8080", streamed=True,
                              started_at_epoch=3000.0)  # fmt: skip
        store.save_record(other, "r")
        rows = store.latency_rows()
        assert [(r.model, r.started_at_epoch) for r in rows] == [
            ("qwen", 1000.0),
            ("qwen", 2000.0),
            ("llama", 3000.0),
        ]  # oldest first, the incomplete draft left out
        assert rows[1] == LatencyRow(
            "qwen", "gpu:8000", 2000.0, True, None, True, False, 120.0, 900.0, 9.0,
            time_to_first_answer_ms=400.0, target_met=True, prompt_tokens=2000,
            cached_tokens=1500,
        )  # fmt: skip
        assert rows[0].ok is False and rows[0].error_kind == "timeout"
        assert [r.model for r in store.latency_rows(since_epoch=1500.0)] == ["qwen", "llama"]
        assert [r.model for r in store.latency_rows(model="QW")] == ["qwen", "qwen"]
        assert [r.model for r in store.latency_rows(endpoint_host="cpu")] == ["llama"]
        assert store.latency_rows(model="%") == []  # LIKE's wildcards are the text itself


def _as_version_6(path: Path) -> None:
    """The file as the release before the figures' columns left it."""
    import sqlite3

    from tui.engine.store.migrations.v007_figure_columns import FIGURES

    with sqlite3.connect(path) as db:
        for name, _, _ in FIGURES:
            db.execute(f"ALTER TABLE records DROP COLUMN {name}")
        db.execute("PRAGMA user_version=6")


def test_an_older_history_reads_the_same_before_and_after_its_migration(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    with Store(path) as store:
        record = RequestRecord(model="qwen", endpoint_host="gpu:8000", streamed=True)
        record.ttft_ms, record.time_to_first_answer_ms, record.target_met = 90.0, 300.0, False
        record.prompt_tokens_usage, record.server = 800, {"cached_tokens": 512}
        store.save_record(record, "reply")
        written = store.latency_rows()
    _as_version_6(path)
    with Store(path, read_only=True) as old:  # not migrated: the figures from the JSON
        assert old.latency_rows() == written
    with Store(path) as migrated:  # migrated: the columns filled from each record's JSON
        assert migrated.latency_rows() == written
    (row,) = written
    assert (row.time_to_first_answer_ms, row.target_met, row.prompt_tokens, row.cached_tokens) == (
        300.0, False, 800, 512
    )  # fmt: skip
