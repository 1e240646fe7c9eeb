"""`firsttoken history`: the saved chats and every request's latency record, as a table for
people, JSON lines for scripts, or OpenTelemetry GenAI names for an observability pipeline;
and a chat's messages as the JSON list that `--messages` reads (so a real conversation can
go through `bench` or `ask`).

It only reads (the file is opened read-only, so a read-only data dir works): with no history
file yet it says so and creates none. A record whose process stopped mid-reply shows as
`incomplete` (its `incomplete` key in --json). Exit codes: 0 ok (also
when there is nothing yet), 1 the history file cannot be read, 2 usage (no such chat).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from tui.commands._common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, error
from tui.commands.bench_output import count, duration, rate, table
from tui.engine.text.figures import per_token
from tui.engine.text.inert import json_text
from tui.engine.text.redact import redact_text

if TYPE_CHECKING:
    from tui.engine.store.database import Store


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch))


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def record_lines(records: list[dict[str, Any]]) -> list[str]:
    header = ["started", "model", "status", "streamed", "trim", "TTFT", "total", "TPOT"]
    header += ["tok/s", "out", "prompt", "cached", "chat"]
    # A race's requests say which target each was (its label): `race` lists them together.
    raced = any(data.get("race_id") for data in records)
    if raced:
        header.append("race target")
    rows = []
    for data in records:
        simulated = " (sim)" if data.get("simulated") else ""
        prompt = data.get("prompt_tokens_usage") or data.get("prompt_tokens_estimated")
        server = data.get("server")
        cached = server.get("cached_tokens") if isinstance(server, dict) else None
        rows.append(
            [
                _when(data["started_at_epoch"]),
                data["model"] + simulated,
                "incomplete" if data.get("incomplete") else data["status"],
                "yes" if data["streamed"] else "no",
                "on" if data["trim_enabled"] else "off",
                duration(data.get("ttft_ms")),
                duration(data.get("total_ms")),
                per_token(data.get("tpot_ms")),
                rate(data.get("output_tokens_per_s")),
                count(data.get("output_tokens")),
                count(prompt),
                count(cached if isinstance(cached, int) else None),
                "—" if data.get("chat_id") is None else str(data["chat_id"]),
                *([_one_line(str(data.get("race_target") or "—"), 40)] if raced else []),
            ]
        )
    return table(header, rows, words=range(5))  # started .. trim: words, then figures


def chat_lines(chats: list[dict[str, Any]]) -> list[str]:
    """The last used first: who made each chat (the app or `ask`), when it was last used, the
    model and endpoint of its latest request."""
    rows = [
        [
            str(chat["id"]),
            str(chat["kind"]),
            _when(chat["last_used_epoch"]),
            str(chat["model"]),
            "—" if chat["endpoint_host"] is None else str(chat["endpoint_host"]),
            str(chat["message_count"]),
            _one_line(str(chat["title"]), 60),
        ]
        for chat in chats
    ]
    header = ["chat", "kind", "last used", "model", "endpoint", "messages", "title"]
    return table(header, rows, words=(1, 2, 3, 4, 6))


def _json_lines(items: list[dict[str, Any]], out: TextIO) -> None:
    for item in items:
        out.write(json_text(item) + "\n")


def _read(store: Store, args: argparse.Namespace) -> tuple[list[dict[str, Any]], str]:
    """What to show, and a line to say when there is nothing."""
    if args.chats:
        chats = [_masked(chat) for chat in store.chats(limit=args.limit)]
        return chats, "no saved chats yet"
    records = [_masked(data) for data in store.records(limit=args.limit, chat_id=args.chat)]
    # Oldest first, like a log: the newest line ends up next to the prompt.
    return list(reversed(records)), "no requests recorded yet"


def _masked(data: dict[str, Any]) -> dict[str, Any]:
    """A record (or a chat) with any URL credentials masked (records are masked when made; a
    file written by an older release may not be)."""
    for name in ("error_message", "endpoint_host"):
        if isinstance(data.get(name), str):
            data[name] = redact_text(data[name])
    return data


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    from tui.engine.metrics.otel import otel_attributes
    from tui.engine.store.database import Store, StoreError, record_from_dict
    from tui.locations import history_db_path

    if args.otel and args.chats:
        error("--otel exports request records: leave out --chats", err)
        return EXIT_USAGE
    if args.conversation and args.chat is None:
        error("--conversation needs --chat ID (which chat)", err)
        return EXIT_USAGE
    path = history_db_path()
    if not path.exists():
        print(f"no history yet: nothing has been sent ({path})", file=err)
        return EXIT_OK
    try:
        with Store(path, read_only=True) as store:
            if args.chat is not None and all(c["id"] != args.chat for c in store.chats()):
                error(
                    f"--chat {args.chat}: no such chat (`firsttoken history --chats` lists them)",
                    err,
                )
                return EXIT_USAGE
            if args.conversation:
                out.write(json_text(store.messages(args.chat), indent=2))
                out.write("\n")
                return EXIT_OK
            items, nothing = _read(store, args)
    except StoreError as unreadable:
        error(str(unreadable), err)
        return EXIT_FAILED
    if args.otel:
        exported = []
        for data in items:
            attributes = otel_attributes(record_from_dict(data))
            attributes["firsttoken.chat_id"] = data.get("chat_id")
            attributes["firsttoken.incomplete"] = bool(data.get("incomplete"))
            exported.append(attributes)
        _json_lines(exported, out)
    elif args.json:
        _json_lines(items, out)
    elif not items:
        print(f"{nothing} ({path})", file=err)
    else:
        lines = chat_lines(items) if args.chats else record_lines(items)
        out.write("\n".join(lines) + "\n")
    return EXIT_OK
