"""`firsttoken demo-server`: the one-line banner, clean exits on signals, one-line errors."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from argparse import Namespace
from pathlib import Path
from types import SimpleNamespace

import httpx2
import pytest

from tui.commands import serve_demo

ROOT = Path(__file__).resolve().parents[2]


def start(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Start a demo server process; return it and its base URL from the banner line."""
    process = subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdout is not None
    banner = process.stdout.readline()
    match = re.search(r" at (http://127\.0\.0\.1:\d+/v1) — Ctrl\+C to stop$", banner.rstrip("\n"))
    assert match, banner
    return process, banner


@pytest.mark.e2e
def test_standalone_server_serves_then_exits_0_on_sigint(tmp_path: Path) -> None:
    script = (
        "import sys, types, argparse; from tui.commands import serve_demo; "
        "config = types.SimpleNamespace(demo_preset='seed-qwen7b', "
        "demo_overrides={'decode_tokens_per_s': 400, 'rtt_ms': 0}); "
        "sys.exit(serve_demo.run(argparse.Namespace(port=0, preset=None, log=None), config))"
    )
    process, banner = start(["-c", script])
    try:
        assert banner.startswith(
            "firsttoken demo endpoint (simulated, preset seed-qwen7b: "
            "0.42 ms/prompt token, 400 tok/s) at http://127.0.0.1:"
        )
        base_url = banner.split(" at ")[1].split(" ")[0]
        body = {"model": "m", "messages": [{"role": "user", "content": "reply 4 tokens"}]}
        reply = httpx2.post(f"{base_url}/chat/completions", json=body, timeout=10).json()
        assert reply["usage"]["completion_tokens"] == 4
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
    assert (process.returncode, out, err) == (0, "", "")


@pytest.mark.e2e
def test_cli_subcommand_with_log_exits_0_on_sigterm(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    process, banner = start(
        ["-m", "tui", "demo-server", "--port", "0", "--preset", "instant", "--log", str(log)]
    )
    try:
        base_url = banner.split(" at ")[1].split(" ")[0]
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        with httpx2.stream("POST", f"{base_url}/chat/completions", json=body, timeout=10) as r:
            assert r.read().endswith(b"data: [DONE]\n\n")
        # The entry is written once the server has finished the exchange, which can be a moment
        # after the client read [DONE]: wait for it (bounded) rather than race it.
        for _ in range(500):
            if log.exists() and log.read_text(encoding="utf-8").endswith("\n"):
                break
            time.sleep(0.01)
        entry = json.loads(log.read_text(encoding="utf-8"))
        assert entry["stream"] is True and entry["done_at"] >= entry["received_at"]
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=10)
    assert (process.returncode, out, err) == (0, "", "")


def test_port_in_use_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = Namespace(port=port, preset="instant", log=None)
        assert serve_demo.run(args, SimpleNamespace()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"firsttoken: error: port {port} on 127.0.0.1 is already in use")
    assert "--port" in err


def test_unknown_preset_lists_the_presets(capsys: pytest.CaptureFixture[str]) -> None:
    args = Namespace(port=0, preset="gpu-huge", log=None)
    assert serve_demo.run(args, SimpleNamespace(demo_preset="cpu-small")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "'gpu-huge'" in err and "cpu-small, seed-qwen7b, h100-70b, instant" in err
    assert "--preset" in err
    config = SimpleNamespace(demo_preset="cpu-small", demo_overrides={"warp": 9})
    assert serve_demo.run(Namespace(port=0, preset=None, log=None), config) == 2
    assert "'warp'" in capsys.readouterr().err
