"""Command-line entry point: argument parsing and dispatch only.

Kept light on purpose: `firsttoken --version` must not import Textual, openai or tiktoken,
so every command module is imported only once its subcommand is chosen.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from tui import __version__
from tui.commands._common import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    OneJsonObject,
    error,
    warning,
)

LATEST_CHAT = 0  # --resume with no id: the app's last used chat
# Flags before the subcommand that take a value (the value is not the subcommand).
_VALUED_FLAGS = ("--config", "--settings", "--base-url", "--model", "--api-key-env", "--messages")


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line naming the flag and the fix (raised as UsageProblem
    for main() to print), never its usage block; `--help` still prints the usage."""

    def error(self, message: str) -> NoReturn:
        from tui.commands.usage_errors import UsageProblem, argument_problem

        raise UsageProblem(argument_problem(self, message))


def wants_ask_json(argv: Sequence[str]) -> bool:
    """Whether the command line is `ask` with `--json` (looked at before argparse, so even
    its own usage errors can answer in JSON)."""
    command = None
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            break
        if command is None:
            if token in _VALUED_FLAGS:
                index += 2
                continue
            if not token.startswith("-"):
                command = token
                if command != "ask":
                    return False
        elif token == "--json":
            return True
        index += 1
    return False


def _whole_number(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` (to `high`), the message saying which."""
    if high is not None:
        expected = f"a whole number from {low} to {high}"
    else:
        expected = "a whole number above 0" if low == 1 else f"a whole number, {low} or more"

    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
        return value

    check.__name__ = "whole number"  # what argparse would call the type
    return check


_positive_int = _whole_number(1)
_non_negative_int = _whole_number(0)
_port = _whole_number(0, 65535)


def _global_flags() -> argparse.ArgumentParser:
    """Flags accepted before or after the subcommand (SUPPRESS keeps a later default from
    overwriting a value given earlier)."""
    common = _Parser(add_help=False)
    group = common.add_argument_group("global options")
    group.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="config.toml to use (default: discovered, see `firsttoken config`)",
    )
    group.add_argument(
        "--settings",
        type=Path,
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="settings.json to use (default: discovered)",
    )
    group.add_argument(
        "--base-url",
        metavar="URL",
        default=argparse.SUPPRESS,
        help="API root, e.g. https://api.example.com/v1",
    )
    group.add_argument(
        "--model", metavar="NAME", default=argparse.SUPPRESS, help="model name to request"
    )
    group.add_argument(
        "--api-key-env",
        metavar="NAME",
        default=argparse.SUPPRESS,
        help="read the API key from this environment variable",
    )
    group.add_argument(
        "--provider",
        metavar="NAME",
        default=argparse.SUPPRESS,
        help="a provider preset (base URL, key variable, headers): openai, openrouter, deepseek, "
        "dashscope, ollama, llamacpp, vllm, lmstudio, azure",
    )
    return common


def _messages_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--messages",
        type=Path,
        metavar="FILE.json",
        default=None,
        help="a JSON list of OpenAI chat messages; PROMPT is appended to it",
    )


def _budget_flag(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--budget", type=_positive_int, metavar="N", default=None, help=help_text)


def _race_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    race = sub.add_parser(
        "race",
        parents=[common],
        help="the same prompt to two or more targets: which reaches its first token sooner",
        description="Send the same prompt to each target, round by round, and say which "
        "reaches its first token sooner, by how much and how sure the rounds make it. A "
        "target is MODEL (the configured endpoint), MODEL@BASE_URL or PROVIDER:MODEL, "
        "optionally followed by settings: ,trim=on|off ,stream=on|off ,budget=N. Exit codes: "
        "0 ok (with --expect-faster: and that target won), 1 a target got no reply or the "
        "expected target did not win, 2 usage or config error, 130 interrupted.",
    )
    race.add_argument("targets", nargs="+", metavar="TARGET", help="two or more targets")
    race.add_argument(
        "--rounds",
        type=_positive_int,
        metavar="N",
        default=5,
        help="requests per target (default: 5; 4 is the fewest that can decide at 95%%)",
    )
    race.add_argument("--prompt", metavar="TEXT", default=None, help="the prompt to race on")
    race.add_argument(
        "--messages",
        type=Path,
        metavar="FILE.json",
        default=None,
        help="a JSON list of OpenAI chat messages to race on (--prompt is appended to it)",
    )
    _budget_flag(race, "trim every target's prompt to N tokens (a target's budget=N wins)")
    race.add_argument(
        "--together",
        action="store_true",
        help="send each round's requests at once (for targets on different servers); by "
        "default one at a time, the order reversed every round",
    )
    race.add_argument(
        "--warm",
        action="store_true",
        help="let the server's prefix cache serve repeated prompts (default: each request cold)",
    )
    race.add_argument(
        "--expect-faster",
        metavar="TARGET",
        default=None,
        help="exit 1 unless this target wins, decided (for scripts)",
    )
    race.add_argument("--json", action="store_true", help="print one JSON object")


def build_parser() -> argparse.ArgumentParser:
    common = _global_flags()
    parser = _Parser(
        prog="firsttoken",
        description="A terminal chat client for any OpenAI-compatible API, built around latency. "
        "With no subcommand it opens the chat app.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"firsttoken {__version__}")
    parser.add_argument(
        "--messages",
        type=Path,
        metavar="FILE.json",
        default=None,
        help="open the app with this conversation (OpenAI message list) loaded",
    )
    parser.add_argument(
        "--resume",
        nargs="?",
        type=_positive_int,
        const=LATEST_CHAT,
        default=None,
        metavar="CHAT",
        help="open a saved chat and carry on (the app's last used one when CHAT is left "
        "out; `firsttoken history --chats` lists them)",
    )
    parser.add_argument(
        "--race",
        nargs="+",
        metavar="TARGET",
        default=None,
        help="open the chat racing these targets side by side (MODEL, MODEL@BASE_URL or "
        "PROVIDER:MODEL, settings after commas: trim=off, stream=off, budget=N)",
    )
    parser.add_argument(
        "--together",
        action="store_true",
        help="with --race: send each message to every target at once, not one at a time",
    )
    parser.add_argument(
        "--warm",
        action="store_true",
        help="with --race: let the server's prefix cache serve repeated prompts (default: "
        "each request cold)",
    )
    sub: Any = parser.add_subparsers(dest="command", metavar="COMMAND")

    ask = sub.add_parser(
        "ask",
        parents=[common],
        help="ask one question; reply to stdout",
        description="Ask one question. The reply streams to stdout, a latency "
        "summary goes to stderr. Exit codes: 0 ok, 1 request failed, 2 usage "
        "or config error.",
    )
    ask.add_argument(
        "prompt", nargs="?", default=None, help="the question (read from stdin when omitted)"
    )
    _messages_flag(ask)
    ask.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="stream the reply (default: from the config)",
    )
    ask.add_argument(
        "--trim",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="trim the prompt to the token budget (default: from the config)",
    )
    _budget_flag(ask, "prompt token budget for trimming (default: from the config)")
    ask.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (reply and latency record) instead of text, whatever fails",
    )
    ask.add_argument(
        "--max-tokens",
        type=_positive_int,
        metavar="N",
        default=None,
        help="the longest reply to ask for (default: from the config); the request class "
        "follows it",
    )
    ask.add_argument(
        "--no-reasoning",
        action="store_true",
        help="do not print a reasoning model's thinking (it goes to stderr, dimmed on a "
        "terminal; --json carries it as `reasoning` either way)",
    )
    ask.add_argument(
        "--raw",
        action="store_true",
        help="print the model's text unchanged, terminal control characters included "
        "(only for a model you trust; by default they are shown as visible stand-ins)",
    )

    _bench_parsers(sub, common)
    _race_parser(sub, common)
    _history_parser(sub, common)
    _records_parsers(sub, common)

    config = sub.add_parser(
        "config",
        parents=[common],
        help="show effective configuration and where each value came from",
        description="Show each effective setting with its origin, the masked "
        "API key and the paths searched. `config init` writes the example "
        "files into the user config dir without overwriting anything.",
    )
    config.add_argument(
        "config_action",
        nargs="?",
        choices=["init"],
        default=None,
        metavar="init",
        help="write example config.toml and settings.json",
    )

    demo = sub.add_parser(
        "demo-server",
        parents=[common],
        help="run the embedded OpenAI-compatible demo endpoint",
        description="Run the embedded OpenAI-compatible endpoint with "
        "simulated latency, for firsttoken or any other client.",
    )
    demo.add_argument("--port", type=_port, default=8000, help="port on 127.0.0.1 (0: any free)")
    demo.add_argument(
        "--preset", default=None, help="latency preset: cpu-small, seed-qwen7b, h100-70b, instant"
    )
    demo.add_argument(
        "--log",
        type=Path,
        metavar="FILE",
        default=None,
        help="append one JSON line per request with the server's timestamps",
    )
    return parser


def _since(text: str) -> float:
    from tui.commands.stats import since_epoch

    return since_epoch(text)


def _records_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """stats, export, chats: answers read from the kept records and chats."""
    stats = sub.add_parser(
        "stats",
        parents=[common],
        help="TTFT, TPOT and total percentiles per model and endpoint, with plots",
        description="Statistics over the kept latency records, per model and endpoint: "
        "p50/p90/p95/p99 of TTFT, time to first answer, TPOT and total; SLO attainment and "
        "goodput; errors by kind; the cached share of prompt tokens; a TTFT histogram and "
        "TTFT over time. --model and --endpoint keep the groups whose names hold the text. "
        "Exit codes: 0 ok, 1 the history cannot be read, 2 usage.",
    )
    stats.add_argument("--endpoint", metavar="HOST", default=None, help="only this endpoint")
    stats.add_argument(
        "--since",
        type=_since,
        metavar="WHEN",
        default=None,
        help="only records since then: 30m, 12h, 7d, 2w back, or a date (2026-11-01)",
    )
    stats.add_argument("--json", action="store_true", help="one JSON object with `groups`")
    stats.add_argument("--no-plot", action="store_true", help="the tables only")

    export = sub.add_parser(
        "export",
        parents=[common],
        help="a saved chat as Markdown (with each reply's figures) or JSON",
        description="Write a saved chat as Markdown, each reply followed by its figures (TTFT, "
        "total, tokens, model), or as the JSON message list that --messages reads back. "
        "Exit codes: 0 ok, 1 the history or the file cannot be read or written, 2 usage.",
    )
    export.add_argument("chat", type=_positive_int, metavar="CHAT", help="the chat's id")
    export.add_argument(
        "--format", choices=["md", "json"], default=None, help="md (default) or json"
    )
    export.add_argument(
        "-o", "--output", type=Path, metavar="FILE", default=None,
        help="write to FILE (its .json or .md suffix picks the format); default: stdout",
    )  # fmt: skip

    chats = sub.add_parser(
        "chats",
        parents=[common],
        help="list, search, rename and delete saved chats",
        description="List the saved chats, the last used first (with --search: those whose "
        "title or messages hold every word), rename one or delete one (its requests' latency "
        "records are kept). Exit codes: 0 ok, 1 the history cannot be read or written, 2 "
        "usage (no such chat, or delete without --yes where nobody can answer).",
    )
    chats.add_argument("--search", metavar="TEXT", default=None, help="words to look for")
    chats.add_argument(
        "--kind", choices=["app", "ask", "race", "all"], default="all", help="only this kind"
    )
    chats.add_argument(
        "--limit", type=_positive_int, metavar="N", default=50, help="chats to list (50)"
    )
    chats.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    action = chats.add_subparsers(dest="chats_action", metavar="ACTION", required=False)
    rename = action.add_parser("rename", help="give a chat a title")
    rename.add_argument("chat", type=_positive_int, metavar="ID")
    rename.add_argument("title", metavar="TITLE")
    delete = action.add_parser("delete", help="delete a chat (its records stay)")
    delete.add_argument("chat", type=_positive_int, metavar="ID")
    delete.add_argument("--yes", action="store_true", help="do not ask first")


def _history_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    history = sub.add_parser(
        "history",
        parents=[common],
        help="saved chats and every request's latency record",
        description="Show the history file: request records oldest first (the latest "
        "--limit), or the saved chats. --json prints the stored records (reply text "
        "included) as JSON lines; --otel the same records under OpenTelemetry GenAI names.",
    )
    which = history.add_mutually_exclusive_group()
    which.add_argument(
        "--chats",
        action="store_true",
        help="list the saved chats instead, the last used first (the app's and `ask` runs', "
        "each with its kind)",
    )
    which.add_argument(
        "--chat", type=_positive_int, metavar="ID", default=None, help="only this chat's records"
    )
    history.add_argument(
        "--limit",
        type=_positive_int,
        metavar="N",
        default=20,
        help="records (or with --chats, chats) to show: the latest N (20)",
    )
    form = history.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    form.add_argument(
        "--otel", action="store_true", help="JSON lines under OpenTelemetry GenAI names"
    )
    form.add_argument(
        "--conversation",
        action="store_true",
        help="with --chat: its messages as one JSON list (what --messages reads)",
    )


def _lengths(text: str) -> list[int]:
    try:
        lengths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected prompt lengths in tokens, comma-separated (e.g. 250,1000,4000), got {text!r}"
        ) from None
    if not lengths or any(length < 1 for length in lengths):
        raise argparse.ArgumentTypeError(f"expected positive token counts, got {text!r}")
    return lengths


def _bench_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """bench, sweep, check: repeated measured requests (tui/commands/bench.py)."""
    codes = "Exit codes: 0 ok, 1 a request failed, 2 usage or config error, 130 interrupted."
    bench = sub.add_parser(
        "bench",
        parents=[common],
        help="TTFT and total time, trimmed vs untrimmed and streamed vs not",
        description="Send one conversation four ways (trimmed or not, streamed or not), "
        "taking turns, and print each way's TTFT and total time. With no prompt it uses the "
        "built-in sample conversation (the app's F6: about 8,200 prompt tokens by the local "
        "count, about 7,400 by a Gemma tokenizer; over the default 6,000-token budget). " + codes,
    )
    bench.add_argument("prompt", nargs="?", default=None, help="the latest user message")
    _messages_flag(bench)
    _budget_flag(bench, "prompt token budget for the trimmed runs (default: from the config)")
    sweep = sub.add_parser(
        "sweep",
        parents=[common],
        help="TTFT against prompt length, and the line through it",
        description="Send prompts of given lengths in tokens (filler text, then a question), "
        "taking turns, and print each length's TTFT and the fitted ms per prompt token. " + codes,
    )
    sweep.add_argument(
        "--lengths",
        type=_lengths,
        metavar="N,N,...",
        default=[250, 500, 1000, 2000, 4000],
        help="prompt lengths in tokens (default: 250,500,1000,2000,4000)",
    )
    sweep.add_argument(
        "--max-tokens",
        type=_positive_int,
        metavar="N",
        default=16,
        help="max_tokens of each request: only the first token matters here (default: 16)",
    )
    check = sub.add_parser(
        "check",
        parents=[common],
        help="a model's TTFT against the request classes' targets",
        description="Send a short question a few times per request class (short_qa, "
        "long_generation, or the config's own) and compare the median TTFT with each class's "
        "target. Exit codes: 0 every target met, 1 a target missed or a request failed, "
        "2 usage or config error, 130 interrupted.",
    )
    for parser, runs in ((bench, 3), (sweep, 3), (check, 5)):
        parser.add_argument(
            "--runs",
            type=_positive_int,
            metavar="N",
            default=runs,
            help=f"requests per variant (default: {runs})",
        )
        parser.add_argument(
            "--warmup",
            type=_non_negative_int,
            metavar="N",
            default=1,
            help="requests sent first and discarded: the first request of a process pays for "
            "its connection and set-up (default: 1)",
        )
        parser.add_argument(
            "--json", action="store_true", help="print one JSON object instead of a table"
        )


def _fail(message: str, code: int) -> int:
    error(message)
    return code


# What a command runs on: nothing but its flags (it reads no config), the config's flags (it
# shows or writes the config itself), or the loaded config.
NEEDS_NOTHING, NEEDS_FLAGS, NEEDS_CONFIG = "nothing", "flags", "config"


@dataclass(frozen=True)
class Command:
    """Where a subcommand's code is (imported only once it is chosen) and what it needs."""

    module: str
    function: str
    needs: str = NEEDS_CONFIG


# Every subcommand, and the app for none (None).
DISPATCH: dict[str | None, Command] = {
    "ask": Command("tui.commands.ask", "run"),
    "bench": Command("tui.commands.bench", "run_bench"),
    "sweep": Command("tui.commands.bench", "run_sweep"),
    "check": Command("tui.commands.bench", "run_check"),
    "history": Command("tui.commands.history", "run", NEEDS_NOTHING),  # reads the history only
    "config": Command("tui.commands.show_config", "run", NEEDS_FLAGS),
    "demo-server": Command("tui.commands.serve_demo", "run"),
    "race": Command("tui.commands.race", "run", NEEDS_FLAGS),  # each target loads its own
    "stats": Command("tui.commands.stats", "run", NEEDS_NOTHING),
    "export": Command("tui.commands.export", "run", NEEDS_NOTHING),
    "chats": Command("tui.commands.chats", "run", NEEDS_NOTHING),
    None: Command("tui.commands.open_app", "run"),
}
COMMANDS = tuple(name for name in DISPATCH if name is not None)


def _dispatch(args: argparse.Namespace) -> int:
    import importlib

    from tui.config import ConfigError, ConfigFlags, load_config

    command = DISPATCH[args.command]
    run = getattr(importlib.import_module(command.module), command.function)
    if command.needs == NEEDS_NOTHING:
        return int(run(args))
    flags = ConfigFlags.from_namespace(args)
    if command.needs == NEEDS_FLAGS:
        return int(run(args, flags))
    try:
        config = load_config(flags)
    except ConfigError as problem:
        if args.command == "ask":
            from tui.commands import ask

            return ask.fail(str(problem), ask.json_report(args), kind="config")
        return _fail(str(problem), EXIT_USAGE)
    for found in config.warnings:
        warning(found)
    return int(run(args, config))


def main(argv: Sequence[str] | None = None) -> int:
    from tui.locations import private_files

    argv = list(sys.argv[1:] if argv is None else argv)
    # Whatever firsttoken creates (history, config, caches, the app's state) is the owner's.
    with private_files():
        return _main(argv)


def _parse(argv: list[str]) -> argparse.Namespace:
    """The parsed command line; UsageProblem (one line) for anything argparse cannot read."""
    from tui.commands.usage_errors import UsageProblem, unrecognized

    args, extras = build_parser().parse_known_args(argv)
    if extras:
        raise UsageProblem(unrecognized(args.command, extras))
    return args


def _main(argv: list[str]) -> int:
    from tui.commands._common import OneJsonObject
    from tui.commands.usage_errors import UsageProblem

    report = OneJsonObject(wants_ask_json(argv))
    try:
        args = _parse(argv)
    except UsageProblem as problem:
        return _fail_any(report, "usage", str(problem), EXIT_USAGE)
    args.json_report = report  # the command prints the one object, or says it did not
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`firsttoken ask ... | head`): stop quietly like other Unix tools.
        # Point stdout at devnull so the interpreter's final flush doesn't raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except RecursionError:
        return _fail_any(report, "usage", "the input is nested too deeply to be read", EXIT_USAGE)
    except Exception as problem:  # the last line of defence: one line, never a traceback
        if os.environ.get("FIRSTTOKEN_DEBUG"):
            raise
        return _fail_any(
            report,
            "unexpected",
            f"unexpected {type(problem).__name__}: {problem} "
            "(run with FIRSTTOKEN_DEBUG=1 for the traceback, and please report it)",
            EXIT_FAILED,
        )


def _fail_any(report: OneJsonObject, kind: str, message: str, code: int) -> int:
    """The last line of defence's report; `ask --json` still gets its one object, unless the
    command already printed it."""
    if report.wanted and not report.printed:
        from tui.commands.ask_output import error_payload

        report.print(error_payload(kind, message))
    return _fail(message, code)


if __name__ == "__main__":
    sys.exit(main())
