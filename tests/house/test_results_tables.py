"""The results tables of the README and docs/performance.md are what `python -m
benchmarks.tables` writes from benchmarks/results/: a figure typed in by hand, or a result saved
without the tables written again, fails here. And the generator itself: a marked table is
written from a result, and a document whose marks name no known table is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import tables
from benchmarks.results import KEPT, load


def test_every_published_table_is_written_from_the_saved_results() -> None:
    for path in tables.DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        new, found = tables.generated(text, lambda name: load(name, KEPT))
        assert found, f"{path.name} has no generated table"
        assert new == text, f"{path.name}: run `python -m benchmarks.tables`"


def test_every_table_reads_a_result_that_is_kept() -> None:
    for row in tables.FIGURE_ROWS:
        assert load(row.result, KEPT) is not None, row.result
    for name in ("render", "render-dense", "render-race", "ask-memory", "history-scale"):
        assert load(name, KEPT) is not None, name


def test_a_table_is_written_from_its_result(tmp_path: Path) -> None:
    result = {
        "command": "python -m benchmarks.bench_ask_memory --sizes 1 32",
        "machine": {"cpus": 2, "load_1min": 0.5},
        "figures": {
            "piece": 16,
            "target_mb_at_32_mib": 400,
            "sizes": [{"mib": 1, "peak_rss_mb": 77.6}, {"mib": 32, "peak_rss_mb": 351.2}],
        },
    }
    (tmp_path / "ask-memory.json").write_text(json.dumps(result))
    text = "before\n<!-- table ask-memory: python -m benchmarks.tables -->\nold\n<!-- /table -->\n"
    new, found = tables.generated(text, lambda name: load(name, tmp_path))
    assert found == ["ask-memory"]
    assert "| peak RSS | 78 MB | 351 MB (target ≤ 400 MB) |" in new
    assert "python -m benchmarks.bench_ask_memory --sizes 1 32" in new and "old" not in new
    assert new.startswith("before\n") and new.endswith("<!-- /table -->\n")
    missing, _ = tables.generated(text, lambda name: None)
    assert tables.NOT_MEASURED in missing


def test_a_mark_naming_no_table_is_refused() -> None:
    text = "<!-- table nonesuch: python -m benchmarks.tables -->\n<!-- /table -->\n"
    with pytest.raises(SystemExit, match="unknown table 'nonesuch'"):
        tables.generated(text, lambda name: None)
