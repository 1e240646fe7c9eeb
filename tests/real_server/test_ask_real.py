"""`firsttoken ask` against the real server, in a subprocess, as a user runs it."""

from __future__ import annotations

from pathlib import Path

from helpers.cli import firsttoken
from real_server_support import RealServer, config_files

from tui.engine.store.database import Store


def test_ask_streams_the_reply_prints_the_summary_and_keeps_the_record(
    llama_server: RealServer, tmp_path: Path
) -> None:
    done = firsttoken(
        "ask", "--base-url", llama_server.base_url, *config_files(tmp_path, max_tokens=24),
        "Name one colour of the sky.",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "the reply is on stdout"
    summary = done.stderr.strip().splitlines()[-1]
    assert summary.startswith("TTFT "), done.stderr
    assert " · total " in summary and "simulated" not in summary
    with Store() as store:  # in the test's own FIRSTTOKEN_HOME
        records = store.records()
    assert len(records) == 1
    record = records[0]
    assert record["status"] == "ok" and record["streamed"]
    assert record["endpoint_host"] == llama_server.root_url.removeprefix("http://")
    assert record["reply_text"].strip() == done.stdout.strip()
