"""`firsttoken ask`: one question, the reply streamed to stdout, a latency summary on stderr.

Exit codes: 0 ok, 1 the request failed (also stalled / ended early: the reply is incomplete),
2 usage or config error, 130 interrupted (Ctrl-C cancels the request cleanly; the partial reply
and its record are kept), 143 / 129 the same after SIGTERM / SIGHUP.

The reply is untrusted text: it reaches stdout inert (tui/engine/text/inert.py), terminal or not,
unless `--raw` asks for it unchanged. With `--json` stdout gets exactly one JSON object,
whatever failed. The prompt and the reply are kept in the history as they happen
(ask_saving.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

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
from tui.commands.ask_counts import count_sent_prompt, exact_trim, tokenizer_for, unless_cancelled
from tui.commands.ask_output import error_payload, json_payload, summary_line
from tui.commands.ask_saving import ReplyKeeper
from tui.engine.chat.events import Delta, Finished, FirstAnswerToken
from tui.engine.metrics.buffering import buffered_message
from tui.engine.text.inert import InertStream, json_text

if TYPE_CHECKING:
    from tui.config import Config
    from tui.engine.chat.client import ChatClient
    from tui.engine.chat.request import ChatRequest
    from tui.engine.tokens.counter import PromptCounter, TokenCounter
    from tui.engine.tokens.server_counts import ServerTokenizer

json_printed = False  # the one --json object is out (main() must not print a second one)

# Signals that stop a reply the way Ctrl-C does: the partial reply and its record are kept.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _stdin_text(stdin: TextIO) -> str:
    """stdin as strict UTF-8: bytes that are not text are a usage error, not a crash."""
    raw: BinaryIO | None = getattr(stdin, "buffer", None)
    if raw is None:
        return stdin.read()
    data = raw.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise UsageError(
            f"stdin: not UTF-8 text (byte {problem.start}: {data[problem.start]:#04x}); "
            "send UTF-8 (e.g. through iconv -t UTF-8)"
        ) from None


def read_prompt(args: argparse.Namespace, stdin: TextIO) -> str | None:
    prompt = getattr(args, "prompt", None)
    if prompt is None and not stdin.isatty():
        prompt = _stdin_text(stdin)
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
        try:
            prompt.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate from the command line's bytes
            raise UsageError(
                "the prompt argument is not valid text (undecodable bytes); pass UTF-8"
            ) from None
        messages.append({"role": "user", "content": prompt})
    if not messages:
        raise UsageError(
            'no prompt: pass it as an argument (firsttoken ask "..."), on stdin, '
            "or with --messages FILE.json"
        )
    return messages


def _color_allowed(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


class _Stopped:
    """Which signal stopped the reply (Ctrl-C, SIGTERM, SIGHUP), and whether stdout broke."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self.broken_pipe = False

    @property
    def exit_code(self) -> int:
        if self.signal is None or self.signal == signal.SIGINT:
            return EXIT_INTERRUPTED
        return 128 + self.signal


class _Reasoning:
    """The model's thinking on stderr as it streams: dimmed on a terminal (unless NO_COLOR),
    plain otherwise, always inert; ended with a line break when the answer starts."""

    def __init__(self, stream: TextIO, *, shown: bool, raw: bool) -> None:
        self.stream = stream
        self.shown = shown
        self.dim = _color_allowed(stream)
        self.inert = None if raw else InertStream()
        self.open = False  # reasoning was written and not ended with a line break yet

    def write(self, text: str) -> None:
        if not self.shown:
            return
        out = self.inert.feed(text) if self.inert else text
        if self.dim and out:
            out = f"\x1b[2m{out}\x1b[0m"
        try:
            self.stream.write(out)
            self.stream.flush()
        except OSError:
            self.shown = False
            return
        self.open = True

    def end(self) -> None:
        if not self.open:
            return
        self.open = False
        tail = self.inert.flush() if self.inert else ""
        with contextlib.suppress(OSError):
            self.stream.write(tail + "\n")
            self.stream.flush()


Prepare = Callable[["ServerTokenizer"], Awaitable["ChatRequest | None"]]


async def _exchange(
    client: ChatClient,
    request: ChatRequest,
    keeper: ReplyKeeper,
    stopped: _Stopped,
    *,
    show_reply: bool,
    raw: bool,
    show_reasoning: bool = True,
    prepare: Prepare | None = None,
) -> Finished:
    """Send `request` (or the one `prepare` makes instead: a trim with the server's counts),
    stream the reply, then count the sent prompt with the server's tokenizer; every step
    cancellable by the stop signals."""
    cancel = asyncio.Event()
    loop = asyncio.get_running_loop()

    def stop(signum: int) -> None:
        if stopped.signal is None:
            stopped.signal = signum
        cancel.set()

    # A signal cancels the request (keeping the partial reply) instead of killing the process.
    installed = []
    for signum in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop, signum)
            installed.append(signum)
    out = sys.stdout
    inert = None if raw else InertStream()
    thinking = _Reasoning(sys.stderr, shown=show_reply and show_reasoning, raw=raw)
    finished: Finished | None = None
    tokenizer = tokenizer_for(client, request.model)
    if prepare is not None:
        prepared = await unless_cancelled(cancel, prepare(tokenizer))
        request = prepared if prepared is not None else request
    keeper.start(request, client.host, client.simulated)
    saver = asyncio.ensure_future(keeper.run_saver())
    try:
        async for event in client.stream(request, cancel):
            if isinstance(event, Delta):
                if event.kind == "reasoning":
                    thinking.write(event.text)
                    continue
                if event.kind != "content":
                    continue
                keeper.add(event.text)
                if show_reply and not stopped.broken_pipe:
                    try:
                        out.write(inert.feed(event.text) if inert else event.text)
                        out.flush()
                    except OSError:  # the reader went away (`| head`) or the terminal closed
                        stopped.broken_pipe = True
                        cancel.set()
            elif isinstance(event, FirstAnswerToken):
                thinking.end()
            elif isinstance(event, Finished):
                finished = event
        thinking.end()
        if finished is not None and not cancel.is_set():
            await unless_cancelled(cancel, count_sent_prompt(tokenizer, finished, request.messages))
        if show_reply and inert is not None and not stopped.broken_pipe:
            with contextlib.suppress(OSError):
                out.write(inert.flush())
    finally:
        await keeper.stop_saver(saver)
        if finished is None:
            keeper.save_progress_now()  # an exception on the way: keep what arrived
        for signum in installed:
            loop.remove_signal_handler(signum)
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


def _open_store(config: Config, stack: contextlib.ExitStack) -> Any:
    if not config.log_every_request:
        return None
    from tui.engine.store.database import Store, StoreError

    try:
        store = Store()
    except StoreError as problem:
        warning(f"not saved: {problem}")
        return None
    stack.callback(store.close)
    return store


def fail(message: str, as_json: bool, kind: str = "usage", code: int = EXIT_USAGE) -> int:
    """A failure before any request: the one line on stderr, and with --json the one object
    on stdout too."""
    global json_printed
    if as_json and not json_printed:
        json_printed = True
        sys.stdout.write(json_text(error_payload(kind, message)) + "\n")
        sys.stdout.flush()
    error(message)
    return code


def run(args: argparse.Namespace, config: Config) -> int:
    global json_printed
    from tui.engine.metrics.record import RequestStatus
    from tui.engine.tokens.counter import get_counter  # no vocabulary yet: it loads on first count
    from tui.engine.tokens.prompt_bound import fits_without_counting

    as_json = bool(getattr(args, "json", False))
    raw = bool(getattr(args, "raw", False))
    try:
        messages = conversation(args, sys.stdin)
    except UsageError as problem:
        return fail(str(problem), as_json)
    budget = getattr(args, "budget", None)
    trim_enabled = getattr(args, "trim", None)
    if trim_enabled is None:
        # --budget N alone means "trim to N".
        trim_enabled = True if budget is not None else config.trim_enabled_by_default
    stream = getattr(args, "stream", None)
    if stream is None:
        stream = config.streaming
    max_tokens = getattr(args, "max_tokens", None)
    if max_tokens is not None and max_tokens > config.reserve_for_output:
        return fail(
            f"--max-tokens {max_tokens:,} exceeds the output reserve ({config.reserve_for_output:,}"
            f", {config.origin('reserve_for_output')}): the budget plus the reply must fit the "
            "context window; ask for less or raise reserveForOutput",
            as_json,
        )

    counter = get_counter(config.model)
    # Send first, count after, whenever nothing depends on the count: the vocabulary takes
    # ~0.5 s to load. It then loads once the reply is in, off the path that reads the stream.
    limit = budget if budget is not None else config.token_budget
    count_after = not trim_enabled or fits_without_counting(messages, limit)

    def build(counts: PromptCounter) -> ChatRequest:
        from tui.engine.chat.request_builder import build_request, uncounted_request
        from tui.wiring import request_settings

        if count_after:
            built = uncounted_request(
                messages,
                model=config.model,
                temperature=config.temperature,
                max_tokens=config.output_limit,
                stream=stream,
                trim_enabled=trim_enabled,
                budget=limit,
            )
        else:
            built = build_request(
                messages,
                request_settings(config),
                counts,
                trim_enabled=trim_enabled,
                stream=stream,
                budget=budget,
            )
        if max_tokens is not None:
            built = replace(built, max_tokens=max_tokens, max_tokens_asked=True)
        return built

    try:
        request = build(counter)
    except ValueError as problem:  # e.g. an invalid trim policy
        return fail(str(problem), as_json)

    async def prepare(tokenizer: ServerTokenizer) -> ChatRequest | None:
        if count_after:  # nothing to decide: it fits, or trimming is off
            return None
        return await exact_trim(tokenizer, counter, messages, limit, build)

    stopped = _Stopped()
    with contextlib.ExitStack() as stack:
        keeper = ReplyKeeper(_open_store(config, stack))
        keeper.open_chat(messages, request.model)
        client = open_client(stack, config, counter)
        if client is None:  # its one line is out; --json still gets its object
            if as_json and not json_printed:
                json_printed = True
                failed = error_payload("usage", "the embedded demo endpoint did not start")
                sys.stdout.write(json_text(failed) + "\n")
            return EXIT_USAGE
        # Timestamps are taken on this thread; another one here (the embedded demo endpoint)
        # must not hold the interpreter for CPython's default 5 ms past an arrival.
        sys.setswitchinterval(0.001)
        finished = asyncio.run(
            _exchange(
                client,
                request,
                keeper,
                stopped,
                show_reply=not as_json,
                raw=raw,
                show_reasoning=not getattr(args, "no_reasoning", False),
                prepare=prepare,
            )
        )
        if count_after:
            # The vocabulary loads now, after the reply: the record gets its prompt counts.
            from tui.engine.chat.request_builder import fill_prompt_counts

            fill_prompt_counts(finished.record, request.messages, counter)
        keeper.finish(finished)  # saved before anything more is written: stdout may be gone

    if stopped.broken_pipe and stopped.signal is None:
        raise BrokenPipeError  # main() exits quietly, as other Unix tools do
    record = finished.record
    try:
        if as_json:
            json_printed = True
            payload = json_payload(
                record, finished.text, chat_id=keeper.chat_id, reasoning=finished.reasoning
            )
            sys.stdout.write(json_text(payload) + "\n")
        elif finished.text and not finished.text.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
        if not as_json:
            print(summary_line(record, color=_color_allowed(sys.stderr)), file=sys.stderr)
            if record.buffered:
                warning(buffered_message())
    except OSError:
        if stopped.signal is None:
            raise
    if record.status is RequestStatus.OK:
        return EXIT_OK
    if record.status is RequestStatus.CANCELLED:
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            error("cancelled; the partial reply was kept")
        return stopped.exit_code
    error(record.error_message or record.status.value)
    return EXIT_FAILED
