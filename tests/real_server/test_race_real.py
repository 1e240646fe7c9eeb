"""`firsttoken race` against llama.cpp's server: the bloated sample untrimmed against trimmed,
four cold rounds each, one at a time. Trimming cuts the prefill by thousands of tokens, so the
trimmed target must win, decided, by seconds."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import firsttoken
from real_server_support import MODEL, SAMPLE_BUDGET, RealServer, config_files

from tui.sample_conversation import bloated_sample


def test_the_trimmed_sample_wins_the_race(llama_server: RealServer, tmp_path: Path) -> None:
    sample = tmp_path / "sample.json"
    sample.write_text(json.dumps(bloated_sample()))
    untrimmed, trimmed = f"{MODEL},trim=off", f"{MODEL},trim=on"
    done = firsttoken(
        "race", untrimmed, trimmed, "--messages", str(sample), "--budget", str(SAMPLE_BUDGET),
        "--rounds", "4", "--json", "--base-url", llama_server.base_url,
        *config_files(tmp_path, max_tokens=1),
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    verdict = payload["verdict"]
    assert verdict["faster"] == trimmed and verdict["decided"], verdict["summary"]
    assert verdict["difference_ms"] > 1000, verdict["summary"]
    by_label = {target["label"]: target for target in payload["targets"]}
    assert by_label[untrimmed]["ok"] == by_label[trimmed]["ok"] == 4
    assert by_label[trimmed]["trim"] and not by_label[untrimmed]["trim"]
