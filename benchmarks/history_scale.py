"""A history the size of a year's heavy use, and how firsttoken's reads of it scale.

    python -m benchmarks.history_scale [--chats 10000] [--messages 100] [--records 100000]
                                       [--keep PATH]

Generates a real history file (through the store's own schema and migrations, rows written
in bulk) in a temporary FIRSTTOKEN_HOME, then times what a user waits for against its target:
the chat list, opening a 2,000-message chat, search over every message, `stats` over every
record, and the app's start. Each figure is the median of a few runs; the machine's load is
printed beside them.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

WORDS = [
    "latency",
    "prefill",
    "decode",
    "token",
    "prompt",
    "cache",
    "server",
    "client",
    "stream",
    "budget",
    "trim",
    "model",
    "reply",
    "context",
    "window",
    "queue",
    "batch",
    "kernel",
    "memory",
    "bandwidth",
    "attention",
    "layer",
    "head",
    "vector",
    "request",
    "network",
    "proxy",
    "gateway",
    "timeout",
    "retry",
    "buffer",
    "chunk",
    "socket",
    "thread",
    "loop",
    "frame",
    "render",
    "terminal",
]
MODELS = ("gpt-4o-mini", "qwen2.5-7b-instruct", "llama-3.1-8b", "demo-cpu-small", "gemma-3-1b")
HOSTS = ("api.openai.com", "127.0.0.1:8080", "openrouter.ai", "127.0.0.1:8000")
BIG_CHAT_MESSAGES = 2_000


# Words of real text follow Zipf's law: a few everywhere, most rare. The vocabulary is the
# technical words above and some thousands more made of syllables.
_SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "pe",
    "da",
    "zu",
    "ri",
    "fo",
    "ga",
    "he",
    "ju",
]
VOCABULARY = WORDS + [a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES]
_WEIGHTS = list(itertools.accumulate(1 / rank for rank in range(1, len(VOCABULARY) + 1)))


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(VOCABULARY, cum_weights=_WEIGHTS, k=words))


def generate(path: Path, chats: int, messages_per_chat: int, records: int, seed: int = 7) -> int:
    """A history at `path`: `chats` chats (the first with BIG_CHAT_MESSAGES messages, the rest
    with `messages_per_chat`), `records` latency records spread over them and over 90 days.
    Returns the big chat's id."""
    from tui.engine.metrics.record import RequestRecord
    from tui.engine.store.database import Store

    rng = random.Random(seed)
    Store(path).close()  # the schema, as firsttoken makes it
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    now = time.time()
    db.execute("BEGIN")
    for chat_id in range(1, chats + 1):
        used = now - rng.uniform(0, 90 * 86400)
        kind = "ask" if chat_id % 4 == 0 else "app"
        db.execute(
            "INSERT INTO chats (id, title, model, created_at_epoch, kind, last_used_epoch)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (chat_id, _text(rng, 6), rng.choice(MODELS), used - 3600, kind, used),
        )
        count = BIG_CHAT_MESSAGES if chat_id == 1 else messages_per_chat
        rows = []
        for position in range(count):
            role = "user" if position % 2 == 0 else "assistant"
            words = 12 if role == "user" else 60
            message = {"role": role, "content": _text(rng, words)}
            rows.append((chat_id, 0, position, role, json.dumps(message)))
        db.executemany(
            "INSERT INTO messages (chat_id, lane, position, role, json) VALUES (?, ?, ?, ?, ?)",
            rows,
        )
    record_rows = []
    for _ in range(records):
        record = RequestRecord(
            model=rng.choice(MODELS),
            endpoint_host=rng.choice(HOSTS),
            streamed=True,
            started_at_epoch=now - rng.uniform(0, 90 * 86400),
            ttft_ms=rng.lognormvariate(5.5, 0.6),
            total_ms=rng.lognormvariate(8.0, 0.5),
            tpot_ms=rng.uniform(8, 60),
            output_tokens=rng.randint(20, 800),
            request_class="short_qa",
            ttft_target_ms=500.0,
        )
        record.target_met = record.ttft_ms is not None and record.ttft_ms <= 500
        data = record.to_dict()
        record_rows.append(
            (
                record.id,
                rng.randint(1, chats),
                record.started_at_epoch,
                record.model,
                record.endpoint_host,
                "ok",
                None,
                1,
                0,
                1,
                record.ttft_ms,
                record.total_ms,
                record.tpot_ms,
                record.output_tokens,
                None,
                json.dumps(data),
                "",
            )
        )
    db.executemany(
        "INSERT INTO records (id, chat_id, started_at_epoch, model, endpoint_host, status,"
        " error_kind, streamed, simulated, trim_enabled, ttft_ms, total_ms, tpot_ms,"
        " output_tokens, prompt_tokens_estimated, record_json, reply_text)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        record_rows,
    )
    from tui.engine.store.migrations.v007_figure_columns import FILL

    db.execute(FILL)  # the figures' columns, as the store writes them with each record
    # The search index, as the store fills it message by message.
    db.execute("INSERT INTO message_search (rowid, text) SELECT id, text FROM message_text")
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return 1


def timed(work: Callable[[], object], runs: int = 5) -> float:
    """The median of `runs` measurements of `work`, in ms (history_scale_reads.measured)."""
    from benchmarks.history_scale_reads import measured

    return statistics.median(measured(work) for _ in range(runs))


def _stats_command() -> float:
    """`firsttoken stats --no-plot` as a user runs it, process start included."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "tui", "stats", "--no-plot"], capture_output=True, check=True
    )
    return float(len(done.stdout))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None, help="write the history here")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="history-scale-"))
    os.environ["FIRSTTOKEN_HOME"] = str(home)
    from tui.locations import history_db_path

    path = history_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    big = generate(path, args.chats, args.messages, args.records)
    size = path.stat().st_size / 1e6
    took = time.perf_counter() - started
    with sqlite3.connect(path) as db:
        messages = db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        last = db.execute(
            "SELECT json FROM messages WHERE chat_id = ? ORDER BY position DESC LIMIT 1", (big,)
        ).fetchone()[0]
    print(
        f"generated {args.chats:,} chats, {messages:,} messages, "
        f"{args.records:,} records: {size:,.0f} MB in {took:.0f} s"
    )
    print(f"load average {os.getloadavg()[0]:.2f}; medians of {args.runs} runs")
    from benchmarks.history_scale_reads import app_reads, store_reads
    from benchmarks.results import command_line, save
    from tui.demo.latency_model import latency_model
    from tui.demo.thread import start_demo_in_thread

    reads: dict[str, dict[str, object]] = {}
    for name, target, work in store_reads(path, big):
        reads[name] = {"ms": timed(work, args.runs), "target": target}
        print(f"{name}: {reads[name]['ms']:,.0f} ms (target {target})")
    stats_ms = timed(lambda: _stats_command() and None, args.runs)
    print(f"`firsttoken stats` command, process start included: {stats_ms:,.0f} ms")
    demo = start_demo_in_thread(latency_model("instant"))
    last_words = " ".join(json.loads(last)["content"].split()[-3:])
    try:
        for name, target, work in app_reads(path, big, demo.base_url, last_words):
            reads[name] = {"ms": timed(work, args.runs), "target": target}
            print(f"{name}: {reads[name]['ms']:,.0f} ms (target {target})")
    finally:
        demo.stop()
    history = {"chats": args.chats, "messages": messages, "records": args.records}
    history["megabytes"] = round(size)
    figures = {"history": history, "runs": args.runs, "reads": reads, "stats_command_ms": stats_ms}
    save("history-scale", command_line("benchmarks.history_scale"), figures)
    if args.keep is not None:
        import shutil

        shutil.copy(path, args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
