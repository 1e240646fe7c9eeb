"""Is the first request of a process measured as honestly as a warm one? (target: the median
difference within 3 ms)

The demo endpoint runs in another process with its request log on; for each request the log
gives the server's own TTFT (request received -> first token sent, `time.perf_counter()` on the
server). What the client measures on top of it (client TTFT - server TTFT: the client's own
overhead plus the loopback network) should not depend on whether the request is the first of
its process:

- cold: a fresh `firsttoken ask --json` process, one request (what users run);
- warm: one long-lived process sending the same request through the engine's ChatClient over
  and over on one client (after a discarded first request).

Cold and warm requests take turns (the order reversed every other round), so load on a shared
machine hits them alike. Printed: each side's median of (client TTFT - server TTFT), their
difference, and the same without the connection set-up phases (a cold process opens a new
connection, a warm one reuses its own: that time is real, and shown as its own phase).

    python -m benchmarks.bench_cold_first_request [--runs 20] [--src DIR]

The figures are saved as the `cold-first-request` result (benchmarks/results.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks.demo_process import base_url_of
from benchmarks.results import command_line, save, signed_ms

ROOT = Path(__file__).resolve().parent.parent
TARGET_MS = 3.0
PROMPT = "How fast is the first token? reply 4 tokens"
SET_UP = ("dns", "connect", "proxy_tunnel", "tls", "stale_connection")

# The warm side: one process, one client, a request per tag read from stdin, one JSON line each.
WARM = r"""
import asyncio, json, sys
from tui.engine.chat.client import ChatClient
from tui.engine.chat.request import ChatRequest

async def main(base_url):
    client = ChatClient(base_url=base_url, api_key="bench", timeout_s=30, chunk_timeout_ms=10000)
    loop = asyncio.get_running_loop()
    while True:
        tag = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if not tag:
            break
        request = ChatRequest([{"role": "user", "content": f"[{tag}] " + sys.argv[2]}], "bench",
                              stream=True, temperature=0.1, max_tokens=16)
        finished = None
        async for event in client.stream(request):
            finished = event
        record = finished.record
        phases = getattr(record, "phases_ms", None)  # none in older versions
        print(json.dumps({"ttft_ms": record.ttft_ms, "phases_ms": phases}), flush=True)
    await client.aclose()

asyncio.run(main(sys.argv[1]))
"""


def child_env(src: Path, home: Path) -> dict[str, str]:
    """A user's environment with an empty home (the real config lookup, none of the
    developer's own config or keys), compiled modules cached as an installed copy has them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIRSTTOKEN_", "XDG_"))}
    env.update(PYTHONPATH=str(src), HOME=str(home), PYTHONUNBUFFERED="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def server_ttft(log: Path, tag: str) -> float:
    for _ in range(300):
        for line in log.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if tag in json.dumps(entry.get("messages", [])) and entry["first_token_at"]:
                return (entry["first_token_at"] - entry["received_at"]) * 1000.0
        time.sleep(0.01)
    raise SystemExit(f"the server logged no request tagged {tag}")


def set_up(phases: dict[str, float] | None) -> float:
    return sum((phases or {}).get(name, 0.0) for name in SET_UP)


def cold_once(src: Path, base_url: str, log: Path, home: Path) -> tuple[float, float]:
    tag = uuid.uuid4().hex[:8]
    command = [sys.executable, "-m", "tui", "ask", "--json", "--base-url", base_url]
    command += ["--model", "bench", f"[{tag}] {PROMPT}"]
    result = subprocess.run(command, cwd=src, env=child_env(src, home), capture_output=True)
    if result.returncode != 0:
        raise SystemExit(f"ask failed: {result.stderr.decode(errors='replace').strip()}")
    payload = json.loads(result.stdout)
    overhead = payload["ttft_ms"] - server_ttft(log, tag)
    return overhead, overhead - set_up(payload.get("phases_ms"))


def warm_once(warm: subprocess.Popen[str], log: Path) -> tuple[float, float]:
    assert warm.stdin is not None and warm.stdout is not None
    tag = uuid.uuid4().hex[:8]
    warm.stdin.write(tag + "\n")
    warm.stdin.flush()
    payload = json.loads(warm.stdout.readline())
    overhead = payload["ttft_ms"] - server_ttft(log, tag)
    return overhead, overhead - set_up(payload.get("phases_ms"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--src", type=Path, default=ROOT, help="the firsttoken tree to measure")
    options = parser.parse_args()
    src = options.src.resolve()
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "requests.jsonl"
        home = Path(folder) / "home"
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tui",
                "demo-server",
                "--port",
                "0",
                "--preset",
                "instant",
                "--log",
                str(log),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT)),
        )
        base_url = base_url_of(server)
        warm = subprocess.Popen(
            [sys.executable, "-c", WARM, base_url, PROMPT],
            cwd=src,
            env=child_env(src, home),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            cold_once(src, base_url, log, home)  # discarded: the OS file cache, .pyc files
            warm_once(warm, log)  # discarded: the warm process's own first request
            cold: list[tuple[float, float]] = []
            hot: list[tuple[float, float]] = []
            for run in range(options.runs):
                if run % 2 == 0:
                    cold.append(cold_once(src, base_url, log, home))
                    hot.append(warm_once(warm, log))
                else:
                    hot.append(warm_once(warm, log))
                    cold.append(cold_once(src, base_url, log, home))
        finally:
            if warm.stdin is not None:
                warm.stdin.close()
            warm.wait(timeout=10)
            server.terminate()
            server.wait(timeout=10)
    load = os.getloadavg()[0]
    print(
        f"client TTFT - server TTFT, {options.runs} cold processes vs {options.runs} warm "
        f"requests, interleaved, load {load:.1f} ({src})"
    )
    figures: dict[str, Any] = {"runs": options.runs, "load_1min": round(load, 2)}
    for label, index, key in (
        ("as measured", 0, "as_measured"),
        ("without connection set-up", 1, "without_set_up"),
    ):
        cold_median = statistics.median(x[index] for x in cold)
        warm_median = statistics.median(x[index] for x in hot)
        spread = f"cold {min(x[index] for x in cold):.2f}..{max(x[index] for x in cold):.2f}"
        print(
            f"  {label:<26} cold median {cold_median:6.2f} ms  warm median {warm_median:6.2f} ms"
            f"  difference {cold_median - warm_median:+6.2f} ms  ({spread})"
        )
        figures[key] = {
            "cold_median_ms": round(cold_median, 3),
            "warm_median_ms": round(warm_median, 3),
            "difference_ms": round(cold_median - warm_median, 3),
            "cold_min_ms": round(min(x[index] for x in cold), 3),
            "cold_max_ms": round(max(x[index] for x in cold), 3),
        }
    difference = statistics.median(x[0] for x in cold) - statistics.median(x[0] for x in hot)
    ratio = abs(difference) / TARGET_MS
    print(f"target: within {TARGET_MS:g} ms  ratio |difference|/target {ratio:.2f}")
    bare = statistics.median(x[1] for x in cold) - statistics.median(x[1] for x in hot)
    tree = "" if options.src.resolve() == ROOT else f", {src.name}"
    plural = "es" if options.runs != 1 else ""
    figures.update(
        target_ms=TARGET_MS,
        ratio_to_target=round(ratio, 2),
        measured=(
            f"{signed_ms(difference)} at a load of {load:.1f} ({options.runs} fresh `ask` "
            f"process{plural} vs {options.runs} warm request{plural[1:]}, interleaved{tree}; "
            f"{signed_ms(bare)} "
            "without the cold process's connection set-up, which is its own phase inside TTFT)"
        ).replace("|", "/"),
    )
    save("cold-first-request", command_line("benchmarks.bench_cold_first_request"), figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
