"""The local OpenAI-compatible endpoint every app is pointed at: firsttoken's demo server.

It runs in its own process (`python -m benchmarks.render.endpoint --decode-tps 125 ...`) so
its token pacing never competes for a GIL with the emulator in the harness process. It logs
every request as one JSON line with perf_counter timestamps (CLOCK_MONOTONIC on Linux, so
they compare directly with the harness's own perf_counter readings).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Scenario:
    name: str
    reply_tokens: int
    decode_tokens_per_s: float
    prefill_ms_per_token: float = 0.05  # "small prefill": ~1 ms for a short prompt
    rtt_ms: float = 0.0
    final_timeout_s: float = 60.0
    # "prose": the demo reply; "code", "lists", "mixed": dense_reply's, with this density.
    reply_kind: str = "prose"
    blocks_per_1k: int = 0

    def prompt(self) -> str:
        # The demo endpoint answers "reply N tokens" with exactly N tokens.
        return f"hello reply {self.reply_tokens} tokens"


SCENARIOS = {
    "short": Scenario("short", reply_tokens=60, decode_tokens_per_s=125.0, final_timeout_s=30),
    "long": Scenario("long", reply_tokens=4000, decode_tokens_per_s=500.0, final_timeout_s=240),
    # The fast provider's case: 4,000 tokens arriving at 2,000 tokens/s.
    "fast": Scenario("fast", reply_tokens=4000, decode_tokens_per_s=2000.0, final_timeout_s=240),
}
# Replies dense with code blocks and lists (dense_reply), 4,000 tokens at 500 tokens/s
# ("code20") and at 2,000 tokens/s ("code20-fast"), 5 to 40 blocks per 1,000 tokens.
for _kind, _densities in (("code", (5, 10, 20, 40)), ("lists", (5, 10, 20)), ("mixed", (20,))):
    for _density in _densities:
        for _suffix, _rate in (("", 500.0), ("-fast", 2000.0)):
            _name = f"{_kind}{_density}{_suffix}"
            SCENARIOS[_name] = Scenario(
                _name,
                reply_tokens=4000,
                decode_tokens_per_s=_rate,
                final_timeout_s=240,
                reply_kind=_kind,
                blocks_per_1k=_density,
            )


class EndpointProcess:
    """The demo endpoint in a child process; `base_url` once it is listening."""

    def __init__(self, scenario: Scenario, log_path: Path) -> None:
        self.log_path = log_path
        log_path.unlink(missing_ok=True)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks.render.endpoint",
                "--decode-tps",
                str(scenario.decode_tokens_per_s),
                "--prefill-ms-per-token",
                str(scenario.prefill_ms_per_token),
                "--rtt-ms",
                str(scenario.rtt_ms),
                "--reply-tokens",
                str(scenario.reply_tokens),
                "--reply-kind",
                scenario.reply_kind,
                "--blocks-per-1k",
                str(scenario.blocks_per_1k),
                "--log",
                str(log_path),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if not line.startswith("http"):
            self.process.kill()
            raise RuntimeError(f"demo endpoint did not start (printed {line!r})")
        self.base_url = line  # http://127.0.0.1:PORT/v1

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def __enter__(self) -> EndpointProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_dense_replies(kind: str, blocks_per_1k: int) -> None:
    """Make this process's demo endpoint answer "reply N tokens" with the demo reply's heading
    and then a block-dense body (dense_reply), N tokens in all."""
    import tui.demo.plan as plan
    from benchmarks.render.dense_reply import dense_tokens
    from tui.demo.reply import tokenize

    demo_reply = plan.reply_tokens

    def dense_reply(summary: Any, length: int) -> list[str]:
        heading = "".join(demo_reply(summary, length)).split("\n\n")[0]
        return (tokenize(heading + "\n\n") + dense_tokens(kind, blocks_per_1k, length))[:length]

    plan.reply_tokens = dense_reply


def main(argv: list[str] | None = None) -> int:
    from tui.demo import start_demo_in_thread
    from tui.demo.latency_model import latency_model

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--decode-tps", type=float, required=True)
    parser.add_argument("--prefill-ms-per-token", type=float, default=0.05)
    parser.add_argument("--rtt-ms", type=float, default=0.0)
    parser.add_argument("--reply-tokens", type=int, default=60)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--reply-kind", default="prose")
    parser.add_argument("--blocks-per-1k", type=int, default=0)
    args = parser.parse_args(argv)
    if args.reply_kind != "prose":
        serve_dense_replies(args.reply_kind, args.blocks_per_1k)
    model = latency_model(
        "instant",
        {
            "decode_tokens_per_s": args.decode_tps,
            "prefill_ms_per_token": args.prefill_ms_per_token,
            "rtt_ms": args.rtt_ms,
            "queue_ms": 0.0,
            "reply_tokens": args.reply_tokens,
        },
    )
    server = start_demo_in_thread(model, port=args.port, request_log=args.log)
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
