"""Client CPU time to consume a long streamed reply: firsttoken's ChatClient vs a bare SDK loop.

The reply is 4,000 chunks ("reply 4000 tokens"); the demo endpoint runs in ANOTHER process, so
`time.process_time()` here counts only the client side: HTTP reads, SSE parsing, per-chunk
objects, and (for ChatClient) the events and the record. Runs are interleaved and the order
alternates, so drift and load affect both sides alike. The bare loop is what most apps do:
`async for chunk in await client.chat.completions.create(stream=True)`, a pydantic
`ChatCompletionChunk` per SSE event.

--rate sets the endpoint's decode speed in tokens/s; give it again for more. The default measures
both 500 (the render benchmark's long reply: one network read per event, which is what a real
server does) and instant (the reply in a few large writes, so many events share one read), one
after the other, and saves them together as the `client-parse` result (benchmarks/results.py).

    python -m benchmarks.bench_client_parse [--runs 15] [--rate 500 --rate instant]
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
from benchmarks.results import command_line, save
from tui.engine.chat.client import ChatClient
from tui.engine.chat.events import Delta, Finished
from tui.engine.chat.request import ChatRequest

ROOT = Path(__file__).resolve().parent.parent
RATES = ["500", "instant"]
MODEL = "demo-model"
MAX_TOKENS = 8192

# The server process: the demo endpoint on its own event loop, its URL on stdout, until stdin
# closes (so it never outlives the benchmark).
SERVER = """
import sys
from tui.demo import start_demo_in_thread
from tui.demo.latency_model import latency_model
overrides = {"decode_tokens_per_s": float(sys.argv[1])} if sys.argv[1] != "instant" else {}
with start_demo_in_thread(latency_model("instant", overrides)) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


def start_server(rate: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, rate],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    return process, base_url_of(process)


def messages(tokens: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"A long answer, please: reply {tokens} tokens"}]


async def ours(client: ChatClient, tokens: int) -> tuple[float, float, int]:
    """(CPU s, wall s, content chunks) for one reply through ChatClient.stream."""
    request = ChatRequest(
        messages(tokens), MODEL, stream=True, temperature=0.1, max_tokens=MAX_TOKENS
    )
    chunks = 0
    finished: Finished | None = None
    wall, cpu = time.perf_counter(), time.process_time()
    async for event in client.stream(request):
        if isinstance(event, Delta):
            chunks += 1
        elif isinstance(event, Finished):
            finished = event
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert finished is not None and finished.record.status.value == "ok", finished
    return cpu, wall, chunks


async def bare(sdk: openai.AsyncOpenAI, tokens: int) -> tuple[float, float, int]:
    """(CPU s, wall s, content chunks) for one reply through a bare SDK streaming loop."""
    chunks = 0
    wall, cpu = time.perf_counter(), time.process_time()
    stream = await sdk.chat.completions.create(  # type: ignore[call-overload]
        model=MODEL,
        messages=messages(tokens),
        stream=True,
        temperature=0.1,
        max_tokens=MAX_TOKENS,
        stream_options={"include_usage": True},
    )
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            chunks += 1
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu, wall, chunks


def describe(name: str, cpu: list[float], wall: list[float], chunks: int) -> str:
    per_chunk_us = statistics.median(cpu) / chunks * 1e6
    return (
        f"{name:<22} CPU median {statistics.median(cpu):6.3f} s  min {min(cpu):6.3f} s"
        f"  ({per_chunk_us:5.1f} us/chunk)   wall median {statistics.median(wall):6.3f} s"
    )


Sample = tuple[float, float, int]  # (CPU s, wall s, content chunks) of one reply


async def measure(runs: int, rate: str, tokens: int, warmup: int) -> dict[str, Any]:
    """Both sides at one endpoint rate, printed; the figures."""
    process, base_url = start_server(rate)
    try:
        client = ChatClient(
            base_url=base_url, api_key="bench", timeout_s=60, chunk_timeout_ms=10000
        )
        sdk = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
        for _ in range(warmup):
            await ours(client, tokens)
            await bare(sdk, tokens)
        a: list[Sample] = []
        b: list[Sample] = []
        for i in range(runs):
            if i % 2 == 0:
                a.append(await ours(client, tokens))
                b.append(await bare(sdk, tokens))
            else:
                b.append(await bare(sdk, tokens))
                a.append(await ours(client, tokens))
        await client.aclose()
        await sdk.close()
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=10)

    assert {x[2] for x in a} == {x[2] for x in b} == {tokens}, "both sides saw every chunk"
    print(f"{tokens}-chunk reply, endpoint rate {rate} tokens/s (separate process), {runs} runs")
    print(describe("firsttoken ChatClient", [x[0] for x in a], [x[1] for x in a], tokens))
    print(describe("bare openai SDK loop", [x[0] for x in b], [x[1] for x in b], tokens))
    ratio = statistics.median(x[0] for x in a) / statistics.median(x[0] for x in b)
    paired = statistics.median(x[0] / y[0] for x, y in zip(a, b, strict=True))
    print(f"CPU ratio ours/bare: {ratio:.2f} (median of paired ratios {paired:.2f})")
    return {
        "firsttoken": side(a, tokens),
        "bare_sdk": side(b, tokens),
        "cpu_ratio": round(ratio, 3),
        "median_paired_ratio": round(paired, 3),
    }


def side(samples: list[Sample], tokens: int) -> dict[str, float]:
    cpu = statistics.median(x[0] for x in samples)
    return {
        "cpu_median_s": round(cpu, 4),
        "cpu_min_s": round(min(x[0] for x in samples), 4),
        "us_per_chunk": round(cpu / tokens * 1e6, 2),
        "wall_median_s": round(statistics.median(x[1] for x in samples), 4),
    }


def seconds(value: float) -> str:
    """`0.63 s`, `0.093 s`: three decimals below a tenth."""
    return f"{value:.3f} s" if value < 0.1 else f"{value:,.2f} s"


def sentence(rate: str, figures: dict[str, Any]) -> str:
    """One rate's part of the `measured` sentence."""
    ours_cpu = figures["firsttoken"]["cpu_median_s"]
    bare_cpu = figures["bare_sdk"]["cpu_median_s"]
    where = "instant endpoint" if rate == "instant" else f"at {rate} tok/s, one packet per token"
    return f"{where}: {seconds(ours_cpu)} vs {seconds(bare_cpu)} (ratio {figures['cpu_ratio']:.2f})"


async def main(runs: int, rates: list[str], tokens: int, warmup: int) -> None:
    measured = {rate: await measure(runs, rate, tokens, warmup) for rate in rates}
    plural = "s" if runs != 1 else ""
    figures: dict[str, Any] = {
        "tokens": tokens,
        "runs": runs,
        "warmup": warmup,
        "rates": measured,
        "measured": "; ".join(sentence(rate, f) for rate, f in measured.items())
        + f"; ChatClient vs bare SDK loop, client CPU medians of {runs} run{plural}",
    }
    save("client-parse", command_line("benchmarks.bench_client_parse"), figures)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=4000)
    parser.add_argument(
        "--rate",
        action="append",
        help="tokens/s, or 'instant'; again for more (default: 500, then instant)",
    )
    options = parser.parse_args()
    asyncio.run(main(options.runs, options.rate or RATES, options.tokens, options.warmup))
