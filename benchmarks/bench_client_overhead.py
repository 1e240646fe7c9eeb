"""TTFT as firsttoken's ChatClient measures it vs a bare openai SDK streaming loop.

Both talk to the same demo endpoint, running in ANOTHER process (`python -m tui demo-server
--port 0`) so the server's work does not share our event loop or GIL. Runs are interleaved
(and the order alternates) so drift affects both sides alike. TTFT is taken the same way for
both: perf_counter before handing the request to the SDK -> the first chunk with content.
The figure that matters is the median of the paired differences (target: <= 1 ms).

    python -m benchmarks.bench_client_overhead [--runs 200] [--preset instant]

Saves the figures as the `client-overhead` result (benchmarks/results.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import openai

from benchmarks.demo_process import base_url_of
from benchmarks.results import command_line, save, signed_ms
from tui.engine.chat.client import ChatClient
from tui.engine.chat.events import Finished
from tui.engine.chat.request import ChatRequest
from tui.engine.metrics.record import percentile

ROOT = Path(__file__).resolve().parent.parent

MESSAGES = [{"role": "user", "content": "How fast is the first token? reply 16 tokens"}]
MODEL = "demo-model"


def start_server(preset: str) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "demo-server", "--port", "0", "--preset", preset],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    return process, base_url_of(process)


async def firsttoken_ttft(client: ChatClient) -> float:
    request = ChatRequest(MESSAGES, MODEL, stream=True, temperature=0.1, max_tokens=64)
    finished: Finished | None = None
    async for event in client.stream(request):
        if isinstance(event, Finished):
            finished = event
    assert finished is not None and finished.record.ttft_ms is not None, finished
    return finished.record.ttft_ms


async def bare_ttft(sdk: openai.AsyncOpenAI) -> float:
    first: float | None = None
    started = time.perf_counter()
    stream = await sdk.chat.completions.create(  # type: ignore[call-overload]
        model=MODEL,
        messages=MESSAGES,
        stream=True,
        temperature=0.1,
        max_tokens=64,
        stream_options={"include_usage": True},
    )
    async for chunk in stream:
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter()
    assert first is not None
    return (first - started) * 1000.0


def describe(name: str, values: list[float]) -> str:
    p50, p90 = percentile(values, 50), percentile(values, 90)
    return f"{name:<22} median {p50:8.3f} ms   p90 {p90:8.3f} ms   min {min(values):8.3f} ms"


def summary(values: list[float]) -> dict[str, Any]:
    """One side's TTFT figures, ms."""
    p50, p90 = percentile(values, 50), percentile(values, 90)
    return {
        "median_ms": round(p50 or 0.0, 3),
        "p90_ms": round(p90 or 0.0, 3),
        "min_ms": round(min(values), 3),
    }


async def main(runs: int, preset: str, warmup: int) -> int:
    process, base_url = start_server(preset)
    try:
        ours = ChatClient(base_url=base_url, api_key="bench", timeout_s=30, chunk_timeout_ms=5000)
        bare = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
        for _ in range(warmup):  # connections open, code paths warm
            await firsttoken_ttft(ours)
            await bare_ttft(bare)
        a: list[float] = []
        b: list[float] = []
        for i in range(runs):
            if i % 2 == 0:
                a.append(await firsttoken_ttft(ours))
                b.append(await bare_ttft(bare))
            else:
                b.append(await bare_ttft(bare))
                a.append(await firsttoken_ttft(ours))
        await ours.aclose()
        await bare.close()
    finally:
        process.terminate()
        process.wait(timeout=10)

    diffs = [x - y for x, y in zip(a, b, strict=True)]
    print(f"endpoint: demo-server --preset {preset} (separate process), {runs} interleaved runs")
    print(describe("firsttoken ChatClient", a))
    print(describe("bare openai SDK loop", b))
    overhead = statistics.median(a) - statistics.median(b)
    paired = statistics.median(diffs)
    print(
        f"overhead: difference of medians {overhead:+.3f} ms, median paired diff {paired:+.3f} ms"
    )
    verdict = "OK" if paired <= 1.0 else "OVER TARGET"
    print(f"target <= 1 ms at the median: {verdict}")
    endpoint = "" if preset == "instant" else f", demo-server --preset {preset}"
    plural = "s" if runs != 1 else ""
    figures = {
        "runs": runs,
        "warmup": warmup,
        "preset": preset,
        "firsttoken": summary(a),
        "bare_sdk": summary(b),
        "difference_of_medians_ms": round(overhead, 3),
        "median_paired_difference_ms": round(paired, 3),
        "target_ms": 1.0,
        "measured": (
            f"{signed_ms(paired, 2 if abs(paired) < 1 else 1)} (median of paired differences, "
            f"{runs} interleaved run{plural}"
            f"{endpoint}; ChatClient TTFT median {statistics.median(a):.2f} ms, bare SDK loop "
            f"{statistics.median(b):.2f} ms)"
        ),
    }
    save("client-overhead", command_line("benchmarks.bench_client_overhead"), figures)
    return 0 if paired <= 1.0 else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--preset", default="instant")
    options = parser.parse_args()
    sys.exit(asyncio.run(main(options.runs, options.preset, options.warmup)))
