"""`firsttoken ask`'s peak memory against the size of the reply it streams (target: at most
400 MB for a 32 MiB reply, a few times the reply's own size).

A loopback server of this script's own streams a reply of the given size in chunks of
`--piece` characters (a token is a few characters; 16 keeps a 32 MiB reply to two million
events), as fast as the client reads. Each run is a fresh `firsttoken ask` process with its
stdout sent to /dev/null; the figure is that process's peak resident set (`ru_maxrss`).

    python -m benchmarks.bench_ask_memory [--sizes 1 8 32] [--piece 16] [--json]

The figures are saved as the `ask-memory` result (benchmarks/results.py); with --json the rows
are printed as JSON on stdout and the line naming the saved file goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.results import command_line, save

ROOT = Path(__file__).resolve().parent.parent
MiB = 1 << 20
TARGET_32_MIB = 400  # MB


def _event(content: str | None, finish: str | None = None) -> bytes:
    delta = {"content": content} if content is not None else {}
    choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"object": "chat.completion.chunk", "choices": [choice]}
    data = b"data: " + json.dumps(body).encode() + b"\n\n"
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


class ReplyServer:
    """Streams `size` bytes of reply text in `piece`-character chunks to every request."""

    def __init__(self, size: int, piece: int) -> None:
        self.size = size
        self.piece = piece
        self.port = 0
        self._ready = threading.Event()

    def start(self) -> None:
        threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True).start()
        self._ready.wait()

    async def _main(self) -> None:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await server.serve_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.lower().split(b"\r\n")
            if line.startswith(b"content-length:")
        )
        await reader.readexactly(length)
        if not head.startswith(b"POST /v1/chat/completions "):  # e.g. a server-side count
            writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        one = _event("x" * (self.piece - 1) + " ")
        batch = one * 256
        sent = 0
        while sent < self.size:
            writer.write(batch)
            sent += self.piece * 256
            await writer.drain()
        writer.write(_event(None, "stop") + _framed_done())
        await writer.drain()
        writer.close()


def _framed_done() -> bytes:
    data = b"data: [DONE]\n\n"
    return f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n"


def peak_mb(base_url: str) -> tuple[float, float]:
    """(peak RSS in MB, seconds) of one `firsttoken ask` run against `base_url`."""
    env = dict(os.environ, FIRSTTOKEN_API_KEY="sk-bench", PYTHONPATH=str(ROOT))
    command = [
        sys.executable,
        "-c",
        "import resource, sys; sys.argv = ['firsttoken'] + sys.argv[1:];"
        "from tui.cli import main\n"
        "try:\n    code = main()\nfinally:\n"
        "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "    print(f'PEAK {peak}', file=sys.stderr)\n"
        "sys.exit(code)",
        "ask",
        "--base-url",
        base_url,
        "--model",
        "m",
        "--no-trim",
        "hi",
    ]
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    seconds = time.perf_counter() - started
    peaks = [line for line in done.stderr.splitlines() if line.startswith("PEAK ")]
    if done.returncode != 0 or not peaks:
        raise SystemExit(f"ask failed: {done.stderr.strip()[-300:]}")
    return int(peaks[-1].split()[1]) / 1024, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 8, 32], help="MiB")
    parser.add_argument("--piece", type=int, default=16, help="characters per chunk")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for size in args.sizes:
        server = ReplyServer(size * MiB, args.piece)
        server.start()
        peak, seconds = peak_mb(f"http://127.0.0.1:{server.port}/v1")
        rows.append({"reply_mib": size, "peak_mb": round(peak, 1), "seconds": round(seconds, 1)})
    sizes = [
        {
            "mib": row["reply_mib"],
            "peak_rss_mb": row["peak_mb"],
            "ratio": round(row["peak_mb"] / (row["reply_mib"] * MiB / 1e6), 2),
            "seconds": row["seconds"],
        }
        for row in rows
    ]
    at = [f"{size['peak_rss_mb']:,.0f} MB with {size['mib']:g} MiB" for size in sizes]
    if at:
        at[0] += " of reply"
    figures = {
        "sizes": sizes,
        "piece": args.piece,
        "target_mb_at_32_mib": TARGET_32_MIB,
        "measured": f"peak RSS {', '.join(at)} ({args.piece}-character chunks)",
    }
    if args.json:
        print(json.dumps(rows))
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the rows alone
            save("ask-memory", command_line("benchmarks.bench_ask_memory"), figures)
        return
    print(f"ask peak memory, {args.piece}-character chunks (target <= {TARGET_32_MIB} MB at 32)")
    print(f"{'reply':>8} {'peak RSS':>10} {'x reply':>8} {'time':>7}")
    for size in sizes:
        print(
            f"{size['mib']:>5} MiB {size['peak_rss_mb']:>7.0f} MB {size['ratio']:>7.1f}x "
            f"{size['seconds']:>6.1f}s"
        )
    save("ask-memory", command_line("benchmarks.bench_ask_memory"), figures)


if __name__ == "__main__":
    main()
