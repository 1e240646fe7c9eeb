"""`firsttoken bench`, `sweep` and `check` end to end in a subprocess, against the demo
endpoint over real HTTP: tables, --json, exit codes, records kept, usage errors."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import ROOT, firsttoken
from helpers.client import demo, fault_url

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def instant():
    with demo("instant") as server:
        yield server


def stored_records(home: Path) -> int:
    paths = list(home.rglob("*.sqlite3")) + list(home.rglob("*.db"))
    assert len(paths) == 1, paths
    with sqlite3.connect(paths[0]) as db:
        return int(db.execute("select count(*) from records").fetchone()[0])


def test_bench_sends_four_ways_and_keeps_every_record(
    instant, tmp_path: Path, isolated_home: Path
) -> None:
    messages = tmp_path / "chat.json"
    history = [{"role": "system", "content": "You answer briefly."}]
    for n in range(12):  # a long history, so a 300-token budget has to trim it
        history.append({"role": "user", "content": f"question {n}: " + "why is that slow? " * 20})
        history.append({"role": "assistant", "content": "because of prefill. " * 20})
    messages.write_text(json.dumps(history))
    done = firsttoken(
        "bench", "--base-url", instant.base_url, "--messages", str(messages), "--budget", "300",
        "--runs", "2", "--json", "and now? reply 5 tokens",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    variants = {v["label"]: v for v in json.loads(done.stdout)["variants"]}
    assert set(variants) == {
        "untrimmed, streamed",
        "untrimmed, not streamed",
        "trimmed, streamed",
        "trimmed, not streamed",
    }
    assert all(v["runs"] == v["ok"] == 2 for v in variants.values())
    untrimmed = variants["untrimmed, streamed"]["prompt_tokens"]
    trimmed = variants["trimmed, streamed"]["prompt_tokens"]
    assert trimmed <= 300 < untrimmed
    not_streamed = variants["untrimmed, not streamed"]
    assert not_streamed["ttft_ms"]["p50"] == not_streamed["total_ms"]["p50"]  # TTFT = total
    assert stored_records(isolated_home) == 8  # the warm-up request is not kept
    assert done.stderr.count("TTFT") == 8  # one progress line per request
    assert done.stderr.count("warm-up: first token") == 1
    payload = json.loads(done.stdout)
    assert payload["model"] == "gpt-4o-mini" and payload["simulated"] is False
    assert {(v["trim"], v["stream"]) for v in variants.values()} == {
        (False, True),
        (False, False),
        (True, True),
        (True, False),
    }
    assert variants["trimmed, streamed"]["trim"] is True


def test_bench_against_a_failing_endpoint_says_the_error_not_an_empty_table(instant) -> None:
    done = firsttoken("bench", "--base-url", fault_url(instant, "500"), "--runs", "1", "hi")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stdout == ""  # not one request succeeded: no table of dashes
    assert done.stderr.count("(error: server)") == 4  # each request's progress line
    last = done.stderr.splitlines()[-1]
    assert last.startswith("firsttoken: error: server error HTTP 500")
    assert last.endswith("(every one of the 4 requests)")


def test_check_against_a_dead_server_says_the_connection_error(isolated_home: Path) -> None:
    import socket

    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    done = firsttoken("check", "--base-url", f"http://127.0.0.1:{port}/v1", "--runs", "1")
    assert done.returncode == 1
    assert "MISSED" not in done.stdout + done.stderr and done.stdout == ""
    last = done.stderr.splitlines()[-1]
    assert last.startswith(f"firsttoken: error: connection refused at 127.0.0.1:{port}")
    as_json = firsttoken(
        "check", "--base-url", f"http://127.0.0.1:{port}/v1", "--runs", "1", "--json"
    )
    payload = json.loads(as_json.stdout)
    assert as_json.returncode == 1 and payload["met"] is False
    assert payload["error"]["kind"] == "connection"


def test_check_says_failed_for_a_class_whose_request_failed(instant, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[llm]\nmax_retries = 0\n", encoding="utf-8")
    done = firsttoken(
        "check", "--config", str(config), "--base-url", fault_url(instant, "500x1"),
        "--runs", "1", "--warmup", "0",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    rows = {line.split()[0]: line.split()[-1] for line in done.stdout.splitlines()[1:3]}
    assert rows == {"short_qa": "failed", "long_generation": "met"}
    assert "failed: short_qa (a request failed" in done.stdout and "MISSED" not in done.stdout


def test_sweep_measures_each_length_and_fits_a_line(instant) -> None:
    done = firsttoken(
        "sweep", "--base-url", instant.base_url, "--lengths", "100,400,1200", "--runs", "1",
        "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    lengths = payload["lengths"]
    assert [v["label"] for v in lengths] == ["100 tokens", "400 tokens", "1,200 tokens"]
    for asked, result in zip((100, 400, 1200), lengths, strict=True):
        assert abs(result["prompt_tokens"] - asked) <= 10  # the server's own count
    assert payload["fit"] is not None and set(payload["fit"]) >= {
        "intercept_ms",
        "ms_per_prompt_token",
        "prefill_tokens_per_s",
        "r2",
        "warning",
    }
    assert payload["endpoint"] == instant.base_url.split("/")[2] and payload["simulated"] is False
    assert payload["warmup"] == 1 and payload["cold"] is True


def test_sweep_refuses_lengths_that_do_not_fit(instant) -> None:
    done = firsttoken("sweep", "--base-url", instant.base_url, "--lengths", "100,abc")
    assert done.returncode == 2 and "--lengths" in done.stderr and "Traceback" not in done.stderr


def classes_config(tmp_path: Path, first_target_ms: int) -> str:
    """A config whose request classes are `first` (max_tokens up to 64) and `rest`, with
    targets no machine's load can cross by accident (the first's is the test's to choose)."""
    config = tmp_path / "config.toml"
    config.write_text(
        "[llm.request_classes]\n"
        f"first = {{ ttft_target_ms = {first_target_ms}, max_output_tokens = 64 }}\n"
        "rest = { ttft_target_ms = 60000 }\n"
    )
    return str(config)


def test_check_passes_when_every_class_meets_its_target(instant, tmp_path: Path) -> None:
    config = classes_config(tmp_path, 60_000)
    done = firsttoken("check", "--config", config, "--base-url", instant.base_url, "--runs", "2")
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line}
    assert rows["first"].endswith("met") and rows["rest"].endswith("met")
    assert "every target met" in done.stdout


def test_check_fails_when_the_first_token_is_late(tmp_path: Path) -> None:
    # 700 ms of simulated network round trip before every first token: a 500 ms target
    # cannot be met (the delay is a floor, whatever the machine's load). The reply streams at
    # a real server's pace: 100,000 tokens/s after 700 ms would arrive as one burst, which is
    # what a buffering proxy delivers, and fail every class.
    config = classes_config(tmp_path, 500)
    with demo("instant", rtt_ms=700.0, decode_tokens_per_s=500.0) as slow:
        done = firsttoken(
            "check", "--config", config, "--base-url", slow.base_url, "--runs", "1", "--json"
        )
    assert done.returncode == 1
    classes = {c["label"]: c for c in json.loads(done.stdout)["classes"]}
    assert classes["first"]["met"] is False and classes["first"]["ttft_ms"]["p50"] >= 700
    assert classes["rest"]["met"] is True
    assert [c["target_ms"] for c in classes.values()] == [500, 60_000]


def test_ctrl_c_prints_what_finished_and_keeps_every_record(isolated_home: Path) -> None:
    # 20 tokens/s: each request streams for ~1 s, so the interrupt lands mid-request.
    with demo("instant", decode_tokens_per_s=20.0) as slow:
        process = subprocess.Popen(
            [sys.executable, "-m", "tui", "bench", "--base-url", slow.base_url, "--runs", "3",
             "--warmup", "0", "reply 20 tokens"],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=dict(os.environ),
        )  # fmt: skip
        assert process.stderr is not None
        progress = process.stderr.readline()  # the first request's line: it has finished
        assert "TTFT" in progress, progress
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert out.splitlines()[1].split()[-1] == "1/1"  # the finished request is in the table
    lines = [progress, *err.splitlines()]
    assert sum("TTFT" in line for line in lines) == 2  # the finished one and the cut one
    assert "(cancelled)" in err
    assert stored_records(isolated_home) == 2


def test_bench_never_waits_on_an_open_stdin(instant, tmp_path: Path) -> None:
    # `ask` reads a missing prompt from stdin; a benchmark in a script must not stall on it.
    messages = tmp_path / "chat.json"
    messages.write_text(json.dumps([{"role": "user", "content": "hi, reply 3 tokens"}]))
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "bench", "--base-url", instant.base_url, "--messages",
         str(messages), "--runs", "1", "--json"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=dict(os.environ),
    )  # fmt: skip
    try:
        out, err = _wait_without_closing(process)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert len(json.loads(out)["variants"]) == 4


def _wait_without_closing(process: subprocess.Popen[str]) -> tuple[str, str]:
    """stdout and stderr once the process ends, its stdin left open all along."""
    assert process.stdout is not None and process.stderr is not None
    process.wait(timeout=60)
    return process.stdout.read(), process.stderr.read()


def test_bench_on_the_demo_says_simulated_cold_and_shows_the_cache(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[demo]\npreset = "cpu-small"\nprefill_ms_per_token = 0.01\ndecode_tokens_per_s = 5000\n'
    )
    done = firsttoken("bench", "--config", str(config), "--runs", "1", "--warmup", "0")
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[0]
    assert header.split() == [
        "variant", "prompt", "tok", "cached", "TTFT", "p50", "TTFT", "p95", "prefill", "p50",
        "total", "p50", "tok/s", "runs",
    ]  # fmt: skip
    assert "; the server's prefill " in done.stdout  # the gain from the server's own figures
    assert "each request cold" in done.stdout
    assert "simulated: the embedded demo endpoint" in done.stdout
    assert "warm-up" not in done.stderr
    as_json = firsttoken("bench", "--config", str(config), "--runs", "1", "--json")
    payload = json.loads(as_json.stdout)
    assert payload["simulated"] is True and payload["cold"] is True
    for variant in payload["variants"]:  # cold: the tag leaves the cache the template's opening
        assert variant["cached_tokens"]["p50"] <= 8 and variant["server_prefill_ms"]["p50"] > 0


def test_check_fails_a_buffered_stream(tmp_path: Path) -> None:
    config = classes_config(tmp_path, 60_000)
    with demo("instant", decode_tokens_per_s=300.0) as server:
        done = firsttoken(
            "check", "--config", config, "--base-url", fault_url(server, "buffered"), "--runs",
            "1", "--warmup", "0",
        )  # fmt: skip
    assert done.returncode == 1
    assert "buffered: streaming is on, but the reply arrived all at once" in done.stdout


def test_sweep_on_the_demo_shows_the_cache_column_and_says_simulated(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[demo]\npreset = "cpu-small"\nprefill_ms_per_token = 0.5\n')
    done = firsttoken("sweep", "--config", str(config), "--lengths", "100,400", "--runs", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].split()[:4] == ["asked", "prompt", "tok", "cached"]
    assert "R² " in done.stdout and "prefill " in done.stdout and "tokens/s" in done.stdout
    assert "simulated: the embedded demo endpoint" in done.stdout


def test_bench_sizes_each_variants_kv_cache_for_a_model_a_preset_names(
    instant, isolated_home: Path
) -> None:
    done = firsttoken(
        "bench", "--base-url", instant.base_url, "--model", "Qwen/Qwen2.5-7B-Instruct",
        "--runs", "1", "--json", "hi, reply 3 tokens",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for variant in json.loads(done.stdout)["variants"]:
        kv = variant["kv_cache"]
        # Qwen2.5 7B: 2 x 28 layers x 4 KV heads x 128 dims x 2 bytes a token.
        assert kv["architecture"] == "Qwen2.5 7B" and kv["cache_type"] == "f16"
        assert variant["kv_cache_bytes"] == kv["prompt_bytes"] == 57_344 * kv["prompt_tokens"]
    table = firsttoken(
        "bench", "--base-url", instant.base_url, "--model", "qwen2.5:7b", "--runs", "1", "hi"
    )
    assert table.returncode == 0 and "KV f16" in table.stdout.splitlines()[0]
