"""`firsttoken ask`: one question, the reply streamed to stdout, a latency summary on stderr.

Exit codes: 0 ok, 1 the request failed (also stalled / ended early: the reply is incomplete),
2 usage or config error, 130 interrupted (Ctrl-C cancels the request cleanly; the partial reply
and its record are kept).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

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
from tui.commands.ask_output import TerminalSanitizer, json_payload, summary_line
from tui.engine.events import Delta, Finished

if TYPE_CHECKING:
    from tui.config import Config
    from tui.engine.client import ChatClient, ChatRequest
    from tui.engine.tokens import TokenCounter


def read_prompt(args: argparse.Namespace, stdin: TextIO) -> str | None:
    prompt = getattr(args, "prompt", None)
    if prompt is None and not stdin.isatty():
        prompt = stdin.read()
    if prompt is not None and not prompt.strip():
        return None
    return prompt.rstrip("\n") if prompt is not None else None


def conversation(args: argparse.Namespace, stdin: TextIO) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    path = getattr(args, "messages", None)
    if path is not None:
        messages = load_messages(Path(path))
    prompt = read_prompt(args, stdin)
    if prompt is not None:
        messages.append({"role": "user", "content": prompt})
    if not messages:
        raise UsageError(
            'no prompt: pass it as an argument (firsttoken ask "..."), on stdin, '
            "or with --messages FILE.json"
        )
    return messages


def _color_allowed(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


async def _exchange(
    client: ChatClient, request: ChatRequest, *, show_reply: bool, sanitize: bool
) -> Finished:
    cancel = asyncio.Event()
    loop = asyncio.get_running_loop()
    # Ctrl-C cancels the request (keeping the partial reply) instead of killing the process.
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, cancel.set)
    out = sys.stdout
    sanitizer = TerminalSanitizer() if sanitize else None
    finished: Finished | None = None
    try:
        async for event in client.stream(request, cancel):
            if isinstance(event, Delta):
                if show_reply and event.kind == "content":
                    out.write(sanitizer.feed(event.text) if sanitizer else event.text)
                    out.flush()
            elif isinstance(event, Finished):
                finished = event
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
        await client.aclose()
    assert finished is not None  # the client always ends with exactly one Finished
    return finished


def open_client(
    stack: contextlib.ExitStack, config: Config, counter: TokenCounter
) -> ChatClient | None:
    """The client for the configured endpoint, or for the embedded demo started on `stack`
    when none is (its one-line notice on stderr); None after a one-line error."""
    from tui.wiring import client_for, open_endpoint

    try:
        endpoint = stack.enter_context(open_endpoint(config))
    except (OSError, ValueError, RuntimeError) as problem:
        error(f"cannot start the embedded demo endpoint: {problem}")
        return None
    if endpoint.notice:
        print(endpoint.notice, file=sys.stderr, flush=True)
    return client_for(config, endpoint, counter)


def _save(config: Config, finished: Finished) -> None:
    if not config.log_every_request:
        return
    from tui.engine.store import Store, StoreError

    try:
        with Store() as store:
            store.save_record(finished.record, finished.text)
    except StoreError as problem:
        warning(f"not saved: {problem}")


def run(args: argparse.Namespace, config: Config) -> int:
    from tui.engine.metrics import RequestStatus
    from tui.engine.prompt_bound import fits_without_counting
    from tui.engine.tokens import get_counter  # no vocabulary yet: it loads on first count

    try:
        messages = conversation(args, sys.stdin)
    except UsageError as problem:
        error(str(problem))
        return EXIT_USAGE
    budget = getattr(args, "budget", None)
    trim_enabled = getattr(args, "trim", None)
    if trim_enabled is None:
        # --budget N alone means "trim to N".
        trim_enabled = True if budget is not None else config.trim_enabled_by_default
    stream = getattr(args, "stream", None)
    if stream is None:
        stream = config.streaming
    as_json = bool(getattr(args, "json", False))

    counter = get_counter(config.model)
    # Send first, count after, whenever nothing depends on the count: the vocabulary takes
    # ~0.5 s to load. It then loads once the reply is in, off the path that reads the stream.
    count_after = not trim_enabled or fits_without_counting(
        messages, budget if budget is not None else config.token_budget
    )
    try:
        request = _request(config, messages, counter, trim_enabled, stream, budget, count_after)
    except ValueError as problem:  # e.g. an invalid trim policy
        error(str(problem))
        return EXIT_USAGE

    with contextlib.ExitStack() as stack:
        client = open_client(stack, config, counter)
        if client is None:
            return EXIT_USAGE
        # Timestamps are taken on this thread; another one here (the embedded demo endpoint)
        # must not hold the interpreter for CPython's default 5 ms past an arrival.
        sys.setswitchinterval(0.001)
        finished = asyncio.run(
            _exchange(client, request, show_reply=not as_json, sanitize=sys.stdout.isatty())
        )

    record = finished.record
    if count_after:
        from tui.engine.request_builder import fill_prompt_counts

        fill_prompt_counts(record, request.messages, counter)
    if as_json:
        # On a terminal, escape everything non-ASCII: C1 controls survive ensure_ascii=False.
        payload = json_payload(record, finished.text)
        sys.stdout.write(json.dumps(payload, ensure_ascii=sys.stdout.isatty()))
        sys.stdout.write("\n")
    elif finished.text and not finished.text.endswith("\n"):
        sys.stdout.write("\n")
    sys.stdout.flush()
    if not as_json:
        print(summary_line(record, color=_color_allowed(sys.stderr)), file=sys.stderr)
    _save(config, finished)

    if record.status is RequestStatus.OK:
        return EXIT_OK
    if record.status is RequestStatus.CANCELLED:
        error("cancelled; the partial reply was kept")
        return EXIT_INTERRUPTED
    error(record.error_message or record.status.value)
    return EXIT_FAILED


def _request(
    config: Config,
    messages: list[dict[str, Any]],
    counter: TokenCounter,
    trim_enabled: bool,
    stream: bool,
    budget: int | None,
    count_after: bool,
) -> ChatRequest:
    """The request to send: whole and uncounted when `count_after`, else trimmed and counted."""
    if count_after:
        from tui.engine.request_builder import uncounted_request

        return uncounted_request(
            messages,
            model=config.model,
            temperature=config.temperature,
            max_tokens=config.output_limit,
            stream=stream,
            trim_enabled=trim_enabled,
        )
    from tui.engine.request_builder import build_request
    from tui.wiring import request_settings

    return build_request(
        messages,
        request_settings(config),
        counter,
        trim_enabled=trim_enabled,
        stream=stream,
        budget=budget,
    )
