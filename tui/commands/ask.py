"""`firsttoken ask`: one question, the reply streamed to stdout, a latency summary on stderr.

Exit codes: 0 ok, 1 the request failed (also stalled / ended early: the reply is incomplete),
2 usage or config error, 130 interrupted (Ctrl-C cancels the request cleanly; the partial reply
and its record are kept), 143 / 129 the same after SIGTERM / SIGHUP.

The reply is untrusted text: it reaches stdout inert (tui/engine/text/inert.py), terminal or not,
unless `--raw` asks for it unchanged. With `--json` stdout gets exactly one JSON object,
whatever failed. The prompt and the reply are kept in the history as they happen, through
the same turn as the app's (tui/session/): the chat and its messages saved before the request
leaves, the reply saved as a draft while it streams, the record at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO, TypeVar

from tui.commands._common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    OneJsonObject,
    UsageError,
    error,
    load_messages,
    warning,
)
from tui.commands.ask_output import error_payload, json_payload, summary_line
from tui.engine.metrics.buffering import buffered_message
from tui.engine.metrics.prefill import progress_words
from tui.session.turn import QuietSink

if TYPE_CHECKING:
    from tui.config import Config
    from tui.engine.chat.client import ChatClient
    from tui.engine.chat.events import Finished, PromptProgress
    from tui.engine.chat.request import ChatRequest
    from tui.engine.tokens.counter import TokenCounter
    from tui.session.chat import Chat

T = TypeVar("T")


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
    """The model's thinking on stderr as it streams (already inert unless --raw): dimmed on a
    terminal (unless NO_COLOR), plain otherwise; ended with a line break when the answer
    starts."""

    def __init__(self, stream: TextIO, *, shown: bool) -> None:
        self.stream = stream
        self.shown = shown
        self.dim = _color_allowed(stream)
        self.open = False  # reasoning was written and not ended with a line break yet

    def write(self, text: str) -> None:
        if not self.shown or not text:
            return
        out = f"\x1b[2m{text}\x1b[0m" if self.dim else text
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
        with contextlib.suppress(OSError):
            self.stream.write("\n")
            self.stream.flush()


class _ProgressLine:
    """The server's progress through the prompt on one stderr line of a terminal, rewritten in
    place and cleared when the reply starts (nothing of it anywhere else: not on a pipe, never
    in --json)."""

    def __init__(self, stream: TextIO, *, shown: bool) -> None:
        self.stream = stream
        self.shown = shown and stream.isatty()
        self.dim = _color_allowed(stream)
        self.open = False

    def show(self, event: PromptProgress) -> None:
        if not self.shown:
            return
        words = progress_words(event.sample, event.rate)
        line = f"\x1b[2m{words}\x1b[0m" if self.dim else words
        try:
            self.stream.write(f"\r\x1b[2K{line}")
            self.stream.flush()
        except OSError:
            self.shown = False
            return
        self.open = True

    def clear(self) -> None:
        if not self.open:
            return
        self.open = False
        with contextlib.suppress(OSError):
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


class _Terminal(QuietSink):
    """The reply to stdout and the thinking to stderr as they stream (on the stream's loop)."""

    def __init__(
        self,
        stopped: _Stopped,
        thinking: _Reasoning,
        *,
        shown: bool,
        prefill: _ProgressLine | None = None,
    ) -> None:
        self.stopped = stopped
        self.thinking = thinking
        self.prefill = prefill if prefill is not None else _ProgressLine(sys.stderr, shown=False)
        self.shown = shown
        self.cancel: Callable[[], None] = lambda: None  # the turn's, once it exists

    def progress(self, event: PromptProgress) -> None:
        self.prefill.show(event)

    def text(self, shown: str) -> None:
        self.prefill.clear()
        if not self.shown or self.stopped.broken_pipe:
            return
        try:
            sys.stdout.write(shown)
            sys.stdout.flush()
        except OSError:  # the reader went away (`| head`) or the terminal closed
            self.stopped.broken_pipe = True
            self.cancel()

    def reasoning(self, shown: str) -> None:
        self.prefill.clear()
        self.thinking.write(shown)

    def answer_started(self) -> None:
        self.thinking.end()

    def ended(self) -> None:
        self.prefill.clear()
        self.thinking.end()


async def unless_cancelled(cancel: asyncio.Event, work: Awaitable[T]) -> T | None:
    """`work`'s result, or None as soon as `cancel` is set (Ctrl-C must not wait on a count)."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait((task, waiter), return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if not task.done():
        task.cancel()
        return None
    try:
        return task.result()
    except Exception:  # a count that failed is left out, never an error of the request
        return None


async def _exchange(
    chat: Chat,
    request: ChatRequest,
    stopped: _Stopped,
    *,
    show_reply: bool,
    raw: bool,
    show_reasoning: bool = True,
) -> Finished:
    """Send `request` (or the same trimmed with the server's counts, when worth it), stream
    the reply, then count the sent prompt with the server's tokenizer and file the record;
    every step cancellable by the stop signals."""
    cancel = asyncio.Event()
    loop = asyncio.get_running_loop()
    sink = _Terminal(
        stopped,
        _Reasoning(sys.stderr, shown=show_reply and show_reasoning),
        shown=show_reply,
        prefill=_ProgressLine(sys.stderr, shown=show_reply),
    )

    def stop(signum: int) -> None:
        if stopped.signal is None:
            stopped.signal = signum
        cancel.set()
        sink.cancel()

    # A signal cancels the request (keeping the partial reply) instead of killing the process.
    installed = []
    for signum in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop, signum)
            installed.append(signum)
    try:
        exact = await unless_cancelled(cancel, chat.exact_request(request))
        turn = chat.begin(sink, exact if exact is not None else request, raw=raw)
        sink.cancel = turn.cancel
        if cancel.is_set():
            turn.cancel()
        finished = await turn.outcome()
        sink.thinking.end()
        if cancel.is_set():
            await chat.settle(turn, finished, server_count=False)
        else:
            await unless_cancelled(cancel, chat.settle(turn, finished))
        chat.file(turn, finished)  # saved before anything more is written: stdout may be gone
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
        await chat.engine.close()
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


class _NotSaved:
    """A history that cannot be written: one warning line, however many saves fail (the
    reply still reaches stdout)."""

    def __init__(self) -> None:
        self.said = False

    def __call__(self, message: str) -> None:
        if not self.said:
            self.said = True
            with contextlib.suppress(OSError):
                warning(message)


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


def fail(message: str, report: OneJsonObject, kind: str = "usage", code: int = EXIT_USAGE) -> int:
    """A failure before any request: the one line on stderr, and with --json the one object
    on stdout too."""
    report.print(error_payload(kind, message))
    error(message)
    return code


def json_report(args: argparse.Namespace) -> OneJsonObject:
    """The run's one-object promise (tui/cli.py hands it over), or a new one."""
    report = getattr(args, "json_report", None)
    if isinstance(report, OneJsonObject):
        return report
    return OneJsonObject(bool(getattr(args, "json", False)))


def run(args: argparse.Namespace, config: Config) -> int:
    from tui.engine.metrics.record import RequestStatus
    from tui.engine.store.database import ASK_CHAT
    from tui.engine.tokens.counter import get_counter  # no vocabulary yet: it loads on first count
    from tui.session.chat import Chat
    from tui.session.chat_state import ChatState
    from tui.session.engine_link import EngineLink
    from tui.session.history import ChatHistory
    from tui.wiring import open_endpoint

    as_json = bool(getattr(args, "json", False))
    report = json_report(args)
    raw = bool(getattr(args, "raw", False))
    try:
        messages = conversation(args, sys.stdin)
    except UsageError as problem:
        return fail(str(problem), report)
    state = ChatState.from_config(config, messages)
    budget = getattr(args, "budget", None)
    if budget is not None:
        state.budget = budget
    trim_enabled = getattr(args, "trim", None)
    # --budget N alone means "trim to N".
    state.trim_enabled = trim_enabled if trim_enabled is not None else (
        True if budget is not None else config.trim_enabled_by_default
    )
    stream = getattr(args, "stream", None)
    if stream is not None:
        state.streaming = stream
    max_tokens = getattr(args, "max_tokens", None)
    if max_tokens is not None and max_tokens > config.reserve_for_output:
        return fail(
            f"--max-tokens {max_tokens:,} exceeds the output reserve ({config.reserve_for_output:,}"
            f", {config.origin('reserve_for_output')}): the budget plus the reply must fit the "
            "context window; ask for less or raise reserveForOutput",
            report,
        )
    state.max_tokens = max_tokens

    counter = get_counter(config.model)
    try:
        # Send first, count after, whenever nothing depends on the count: the vocabulary
        # takes ~0.5 s to load. It then loads once the reply is in, off the stream's path.
        request = state.build_request(counter, count_later=True)
    except ValueError as problem:  # e.g. an invalid trim policy
        return fail(str(problem), report)

    stopped = _Stopped()
    with contextlib.ExitStack() as stack:
        # Kept out of the app's chat picker: a one-shot question is not a chat to go back to.
        history = ChatHistory(_open_store(config, stack), state, warn=_NotSaved(), kind=ASK_CHAT)
        stack.callback(history.close)  # a draft still open is saved as it stands
        history.past_changed(create=True)  # the chat and its messages, before anything is sent
        client = open_client(stack, config, counter)
        if client is None:  # its one line is out; --json still gets its object
            report.print(error_payload("usage", "the embedded demo endpoint did not start"))
            return EXIT_USAGE
        engine = EngineLink(lambda: open_endpoint(config), [config.model])
        engine.client, engine.counter, engine.connected = client, counter, True
        chat = Chat(state, history, engine)
        # Timestamps are taken on this thread; another one here (the embedded demo endpoint)
        # must not hold the interpreter for CPython's default 5 ms past an arrival.
        sys.setswitchinterval(0.001)
        finished = asyncio.run(
            _exchange(
                chat,
                request,
                stopped,
                show_reply=not as_json,
                raw=raw,
                show_reasoning=not getattr(args, "no_reasoning", False),
            )
        )

    if stopped.broken_pipe and stopped.signal is None:
        raise BrokenPipeError  # main() exits quietly, as other Unix tools do
    record = finished.record
    try:
        if as_json:
            report.print(
                json_payload(
                    record, finished.text, chat_id=state.chat_id, reasoning=finished.reasoning
                )
            )
        elif finished.text and not finished.text.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
        if not as_json:
            print(summary_line(record, color=_color_allowed(sys.stderr)), file=sys.stderr)
            if record.buffered:
                warning(buffered_message())
            for notice in record.notices:
                print(f"firsttoken: note: {notice}", file=sys.stderr)
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
