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
    for path in tables.DOCUMENTS:
        _, found = tables.generated(path.read_text(encoding="utf-8"), lambda name: None)
        for name in found:
            assert tables.NOT_MEASURED not in tables.TABLES[name](lambda r: load(r, KEPT)), name


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


def test_the_write_cost_table_names_the_mode_when_two_were_compared(tmp_path: Path) -> None:
    row = {"kind": "code", "start_ms": 8.94, "middle_ms": 11.3, "end_ms": 8.26}
    replies = [
        {**row, "settled_blocks": "folded", "end_over_start": 0.924, "all_writes_s": 1.21},
        {**row, "settled_blocks": "live", "end_over_start": 1.15, "all_writes_s": 1.9},
    ]
    figures = {"step_tokens": 40, "density": 20, "rounds": 2, "compare": True, "replies": replies}
    result = {"command": "python -m benchmarks.bench_settled_blocks --compare", "figures": figures}
    (tmp_path / "settled-blocks.json").write_text(json.dumps(result))
    text = "<!-- table settled-blocks: python -m benchmarks.tables -->\n<!-- /table -->\n"
    new, _ = tables.generated(text, lambda name: load(name, tmp_path))
    assert "| `code` | folded | 8.9 ms | 11.3 ms | 8.3 ms | 0.92× | 1.21 s |" in new
    assert "| `code` | live |" in new and "CPU per 40-token write (medians of 2 rounds" in new
