"""`firsttoken bench`, `sweep` and `check`: repeated measured requests, a table or JSON out.

Exit codes: 0 ok (check: every target met), 1 a request failed (check: a target missed),
2 usage or config error, 130 interrupted (Ctrl-C stops after the request in flight; what was
measured so far is printed and every record is kept).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tui.commands._common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    error,
    load_messages,
    warning,
)
from tui.commands.ask import open_client
from tui.commands.bench_output import (
    Measured,
    bench_lines,
    bench_payload,
    check_lines,
    check_payload,
    sweep_lines,
    sweep_payload,
)
from tui.commands.progress import LiveLine, RequestProgress
from tui.engine.bench import (
    CHECK_QUESTION,
    ClassVerdict,
    Variant,
    VariantResult,
    filler_messages,
    fit_line,
    run_rounds,
)
from tui.engine.chat.events import Finished
from tui.engine.metrics.record import RequestRecord, RequestStatus
from tui.engine.text.inert import json_text

if TYPE_CHECKING:
    from tui.config import Config
    from tui.engine.chat.client import ChatClient
    from tui.engine.tokens.counter import TokenCounter


def _live_line(as_json: bool) -> LiveLine:
    """The live progress line: on a terminal's stderr only, never with --json."""
    return LiveLine(sys.stderr, enabled=not as_json and sys.stderr.isatty())


def _progress(label: str, finished: Finished) -> None:
    record = finished.record
    ttft = f"{record.ttft_ms:,.0f} ms" if record.ttft_ms is not None else "—"
    print(f"  {label}: TTFT {ttft}{_failed(record)}", file=sys.stderr, flush=True)


def _failed(record: RequestRecord) -> str:
    """How a request that did not succeed ended, for its progress line: " (error: connection)"."""
    if record.status is RequestStatus.OK:
        return ""
    kind = f": {record.error_kind}" if record.error_kind else ""
    return f" ({record.status.value}{kind})"


def _warmup_progress(label: str, finished: Finished) -> None:
    record = finished.record
    first = f"{record.ttft_ms:,.0f} ms" if record.ttft_ms is not None else "—"
    state = "" if record.status is RequestStatus.OK else f", {record.status.value}"
    print(f"  {label}: first token {first}{state} (discarded)", file=sys.stderr, flush=True)


def _measure(
    config: Config,
    counter: TokenCounter,
    variants: list[Variant],
    args: argparse.Namespace,
    line: LiveLine,
) -> Measured | int:
    """Each variant `--runs` times against the configured (or embedded demo) endpoint, after
    `--warmup` discarded requests, every measured record saved; or an exit code. On a
    terminal, `line` says which request is under way and for how long."""
    runs, warmup = args.runs, args.warmup
    progress = RequestProgress(line, warmup + runs * len(variants) if variants else 0)
    from tui.engine.store.database import Store, StoreError

    store = None
    if config.log_every_request:
        try:
            store = Store()
        except StoreError as problem:
            warning(f"records not saved: {problem}")

    def on_finished(label: str, finished: Finished) -> None:
        progress.clear()
        _progress(label, finished)
        if store is not None:
            try:
                store.save_record(finished.record, finished.text)
            except StoreError as problem:  # a full disk must not lose the measurements
                warning(f"record not saved: {problem}")

    def on_warmup(label: str, finished: Finished) -> None:
        progress.clear()
        _warmup_progress(label, finished)

    async def go(client: ChatClient) -> Measured:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, cancel.set)
        try:
            results = await run_rounds(
                client, variants, runs, on_finished, cancel, warmup, on_warmup, progress.start
            )
            model = variants[0].request.model if variants else config.model
            return Measured(results, cancel.is_set(), client.host, model, client.simulated, warmup)
        finally:
            await progress.stop()
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)
            await client.aclose()

    with contextlib.ExitStack() as stack:
        if store is not None:
            stack.callback(store.close)
        line.clear()  # the endpoint's notice goes on a line of its own
        client = open_client(stack, config, counter)
        if client is None:
            return EXIT_USAGE
        return asyncio.run(go(client))


def _finish(
    lines: list[str],
    payload: dict[str, Any],
    as_json: bool,
    failed: bool,
    measured: Measured,
) -> int:
    """Print the table (or the JSON object) and say how it ended. When not one request
    succeeded, there is nothing to tabulate: the error itself is the answer (a dead server is
    not a missed target), with exit 1."""
    nothing = nothing_measured(measured.results)
    if as_json:
        if nothing is not None:
            payload = {**payload, "error": {"kind": nothing.error_kind, "message": _said(nothing)}}
        print(json_text(payload))
    elif nothing is None or measured.stopped:
        print("\n".join(lines))
    if measured.stopped:
        error("interrupted: the runs that finished are above; every request's record was kept")
        return EXIT_INTERRUPTED
    if nothing is not None:
        error(_said(nothing) + _others(measured.results, nothing))
        return EXIT_FAILED
    return EXIT_FAILED if failed else EXIT_OK


def nothing_measured(results: list[VariantResult]) -> RequestRecord | None:
    """The first failed request when every request failed, else None."""
    records = [record for result in results for record in result.records]
    if not records or any(record.status is RequestStatus.OK for record in records):
        return None
    return records[0]


def _said(record: RequestRecord) -> str:
    return record.error_message or record.status.value


def _others(results: list[VariantResult], first: RequestRecord) -> str:
    """How many requests failed otherwise than the first did (the same error is said once)."""
    said = _said(first)
    other = sum(1 for r in results for record in r.records if _said(record) != said)
    total = sum(len(r.records) for r in results)
    if not other:
        return f" (every one of the {total} requests)" if total > 1 else ""
    return f" (and {other} of the {total} requests failed otherwise; --json lists each error)"


# -- bench ------------------------------------------------------------------------------------


def run_bench(args: argparse.Namespace, config: Config) -> int:
    from tui.engine.chat.request_builder import build_request
    from tui.engine.tokens.counter import get_counter
    from tui.wiring import request_settings

    # Unlike `ask`, stdin is never read: a script's open stdin must not stall a benchmark.
    messages: list[dict[str, Any]] = []
    if args.messages is not None:
        try:
            messages = load_messages(args.messages)
        except UsageError as problem:
            error(str(problem))
            return EXIT_USAGE
    if args.prompt is not None:
        messages.append({"role": "user", "content": args.prompt})
    from_sample = not messages
    if from_sample:
        from tui.sample_conversation import bloated_sample

        messages = bloated_sample()
    line = _live_line(args.json)
    line.show("  counting the prompt…")
    counter = get_counter(config.model)
    if from_sample:
        line.clear()
        print(
            "firsttoken: no prompt given: using the built-in sample conversation (the app's F6: "
            f"{counter.count_messages(messages):,} prompt tokens by the local count; the server "
            "counts it with its own tokenizer, in the table)",
            file=sys.stderr,
        )
    budget = args.budget
    variants = []
    for trim in (False, True):
        for stream in (True, False):
            request = build_request(
                messages,
                request_settings(config),
                counter,
                trim_enabled=trim,
                stream=stream,
                budget=budget,
            )
            label = (
                f"{'trimmed' if trim else 'untrimmed'}, {'streamed' if stream else 'not streamed'}"
            )
            variants.append(Variant(label, request))

    outcome = _measure(config, counter, variants, args, line)
    if isinstance(outcome, int):
        return outcome
    failed = any(result.failures for result in outcome.results)
    return _finish(bench_lines(outcome), bench_payload(outcome), args.json, failed, outcome)


# -- sweep ------------------------------------------------------------------------------------


def run_sweep(args: argparse.Namespace, config: Config) -> int:
    from tui.engine.chat.request_builder import build_request
    from tui.engine.tokens.counter import get_counter
    from tui.wiring import request_settings

    lengths: list[int] = args.lengths
    limit = config.context_window - config.output_limit if config.context_window else None
    if limit is not None and max(lengths) > limit:
        error(
            f"--lengths: {max(lengths):,} prompt tokens do not fit the context window "
            f"({config.context_window:,} minus {config.output_limit:,} for the reply); "
            "ask for shorter prompts or raise contextWindow"
        )
        return EXIT_USAGE
    line = _live_line(args.json)
    counter = get_counter(config.model)
    variants = []
    for length in lengths:
        line.show(f"  writing a prompt of {length:,} tokens…")
        request = build_request(
            filler_messages(length, counter),
            request_settings(config),
            counter,
            trim_enabled=False,
            stream=True,
        )
        variants.append(Variant(f"{length:,} tokens", replace(request, max_tokens=args.max_tokens)))

    outcome = _measure(config, counter, variants, args, line)
    if isinstance(outcome, int):
        return outcome
    results = outcome.results
    points = [
        (float(tokens), ttft)
        for result in results
        if (tokens := result.prompt_tokens) is not None
        and (ttft := result.percentile("ttft_ms", 50)) is not None
    ]
    fit = fit_line(points)
    failed = any(result.failures for result in results)
    lines, payload = sweep_lines(outcome, fit), sweep_payload(outcome, fit)
    return _finish(lines, payload, args.json, failed, outcome)


# -- check ------------------------------------------------------------------------------------


def run_check(args: argparse.Namespace, config: Config) -> int:
    from tui.engine.chat.request_builder import build_request
    from tui.engine.tokens.counter import get_counter
    from tui.wiring import request_settings

    line = _live_line(args.json)
    counter = get_counter(config.model)
    messages = [{"role": "user", "content": CHECK_QUESTION}]
    base = build_request(
        messages, request_settings(config), counter, trim_enabled=False, stream=True
    )
    base = replace(base, max_tokens_asked=True)  # each class is checked at its own length
    variants: list[Variant] = []
    targets: dict[str, float] = {}
    floor = 0  # the largest max_tokens an earlier class is chosen for (classify: first match)
    for request_class in config.request_classes:
        bound = request_class.max_output_tokens
        max_tokens = config.output_limit if bound is None else min(bound, config.output_limit)
        if max_tokens <= floor:
            continue  # the output limit leaves no request in this class
        variants.append(Variant(request_class.name, replace(base, max_tokens=max_tokens)))
        targets[request_class.name] = request_class.ttft_target_ms
        floor = max_tokens if bound is not None else floor

    outcome = _measure(config, counter, variants, args, line)
    if isinstance(outcome, int):
        return outcome
    verdicts = [ClassVerdict(r.label, targets[r.label], r) for r in outcome.results]
    missed = not verdicts or any(not verdict.met for verdict in verdicts)
    thresholds = config.thresholds()
    return _finish(
        check_lines(verdicts, thresholds, outcome.simulated),
        check_payload(verdicts, outcome),
        args.json,
        missed,
        outcome,
    )
