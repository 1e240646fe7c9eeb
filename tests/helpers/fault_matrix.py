"""The fault matrix: each fault played against each surface, and docs/faults.md made from it.

A *surface* is a function `run(case, server) -> Outcome`: it sends one request the way that
part of firsttoken does (the engine's ChatClient, the `ask` command, later the app), against
`case.base_url(server)`, then a second request to the same base_url (the server misbehaves
only once), and reports what a user of that surface got. To add one, write such a function
and add it to SURFACES (its name becomes a section of docs/faults.md); the matrix test runs
every case on it and the document follows. `python -m tests.faults_report` rewrites the doc.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from helpers.app_pilot import firsttoken_app
from helpers.client import TEST_KEY, closed_port, make_client, make_request
from helpers.fault_server import (
    BIG_CHUNK,
    BIG_CHUNKS,
    HEALTHY_REPLY,
    HOSTILE,
    LONG_LINE,
    NOT_UTF8_WORD,
    PARTIAL,
    FaultServer,
)
from tui.engine.chat.events import Finished
from tui.engine.text.inert import inert, inert_line
from tui.engine.tokens.counter import get_counter
from tui.engine.tokens.trim import TrimPolicy, trim

DOC = Path(__file__).resolve().parents[2] / "docs" / "faults.md"
TIMEOUT_S = 1.0
CHUNK_TIMEOUT_MS = 300
STALL_TIMEOUT_MS = 600
PARTIAL_TEXT = "".join(PARTIAL)


@dataclass(frozen=True)
class FaultCase:
    name: str  # the row's label in docs/faults.md
    fault: str  # a FaultServer fault, or "refused", "dns", "tls" (the endpoint itself)
    sent: str = ""  # the reply text the server sends before (or instead of) failing
    trim: bool = False  # the request is trimmed (to TRIM_BUDGET tokens)

    def base_url(self, server: FaultServer, tag: str) -> str:
        tag = f"{tag}-trim" if self.trim else tag
        if self.fault == "refused":
            return f"http://127.0.0.1:{closed_port()}/v1"
        if self.fault == "dns":
            return "http://no-such-host.invalid/v1"
        if self.fault == "tls":
            return server.url("healthy", tag).replace("http://", "https://")
        return server.url(self.fault, tag)

    @property
    def endpoint_is_the_fault(self) -> bool:
        return self.fault in ("refused", "dns", "tls")


TRIM_BUDGET = 1000
CASES: tuple[FaultCase, ...] = (
    FaultCase("stall after 3 chunks", "stall", PARTIAL_TEXT),
    FaultCase("drop mid-stream", "drop-mid", PARTIAL_TEXT),
    FaultCase("drop before the first byte", "drop-before"),
    FaultCase("drop after the response head (HTTP 200), before any event", "drop-after-head"),
    FaultCase("a chunk that is not JSON", "not-json", PARTIAL_TEXT),
    FaultCase("HTTP 200 with an empty stream", "empty"),
    FaultCase("no finish reason, no [DONE]", "no-finish", PARTIAL_TEXT),
    FaultCase("HTTP 500", "500"),
    FaultCase("HTTP 503", "503"),
    FaultCase("HTTP 429 with Retry-After", "429"),
    FaultCase("HTTP 401", "401"),
    FaultCase("HTTP 403", "403"),
    FaultCase("HTTP 404 from the API (base_url without /v1)", "404-api"),
    FaultCase("HTTP 404 from a website (HTML)", "404-html"),
    FaultCase("HTTP 400 context length, trimming off", "context"),
    FaultCase("HTTP 400 context length, trimming on", "context", trim=True),
    FaultCase("accepts and never answers", "hang"),
    FaultCase("connection refused", "refused"),
    FaultCase("DNS failure (.invalid host)", "dns"),
    FaultCase("TLS to a plain-HTTP port", "tls"),
    FaultCase("a 1 MiB reply", "big", BIG_CHUNK * BIG_CHUNKS),
    FaultCase("a very long line (512 KiB, one event)", "long-line", LONG_LINE),
    FaultCase("an unterminated code fence", "fence", "Here:\n\n```python\nprint('never closed')\n"),
    FaultCase("escape sequences in the reply", "esc-reply", HOSTILE),
    FaultCase("escape sequences in an error body (HTTP 500)", "esc-error"),
    FaultCase("escape sequences in the model id", "esc-model", "".join(HEALTHY_REPLY)),
    FaultCase("a byte that is not UTF-8", "not-utf8", PARTIAL_TEXT + NOT_UTF8_WORD),
    FaultCase("a gzip body cut before its end", "gzip-cut", PARTIAL_TEXT),
    FaultCase("a gzip bomb (80 KB that expand to 80 MiB)", "gzip-bomb"),
)


@dataclass(frozen=True)
class Outcome:
    status: str  # the record's status (with the exit code for a command)
    kind: str  # the error kind, or "—"
    message: str  # the one line the user sees, as shown (inert)
    partial_kept: str  # whether the text that arrived is kept where this surface keeps it
    next_works: str  # whether the next request on this surface works
    terminal_inert: str = "—"  # no ESC or C1 byte from server text reached the terminal


Surface = Callable[[FaultCase, FaultServer], Outcome]

_PORT = re.compile(r"127\.0\.0\.1:\d+")


def normalised(message: str) -> str:
    """A message as the document shows it: inert, one line, loopback ports as PORT, the test's
    home folder as $FIRSTTOKEN_HOME."""
    import os

    home = os.environ.get("FIRSTTOKEN_HOME")
    if home:
        message = message.replace(home, "$FIRSTTOKEN_HOME")
    return _PORT.sub("127.0.0.1:PORT", inert_line(message))


def _kept(case: FaultCase, kept: bool) -> str:
    """Whether what the server sent before failing (`case.sent`) is all kept."""
    if not case.sent:
        return "— (nothing arrived)"
    return f"yes ({len(case.sent):,} chars)" if kept else "NO"


def _request(case: FaultCase):  # -> ChatRequest
    request = make_request()
    if case.trim:
        counter = get_counter("demo-model")
        result = trim(request.messages, TRIM_BUDGET, TrimPolicy(), counter)
        request = make_request(trim=result)
    return request


# -- the engine -----------------------------------------------------------------------------------


async def _engine(case: FaultCase, server: FaultServer) -> Outcome:
    client = make_client(
        case.base_url(server, "engine"),
        max_retries=0,
        timeout_s=TIMEOUT_S,
        chunk_timeout_ms=CHUNK_TIMEOUT_MS,
        stall_timeout_ms=STALL_TIMEOUT_MS,
    )
    try:
        first = await _finished(client.stream(_request(case)))
        second = None
        if not case.endpoint_is_the_fault:
            second = await _finished(client.stream(make_request()))
    finally:
        await client.aclose()
    record = first.record
    if case.fault == "esc-model":
        ids = await _model_ids(case, server)
        message = "model ids: " + ", ".join(ids)
    else:
        message = record.error_message or "—"
    return Outcome(
        status=record.status.value,
        kind=record.error_kind or "—",
        message=normalised(message),
        partial_kept=_kept(case, first.text == case.sent),
        next_works=_next(second is not None and second.record.status.value == "ok", case),
    )


async def _model_ids(case: FaultCase, server: FaultServer) -> list[str]:
    client = make_client(case.base_url(server, "models"), max_retries=0, timeout_s=TIMEOUT_S)
    try:
        return await client.list_models()
    finally:
        await client.aclose()


async def _finished(events) -> Finished:  # type: ignore[no-untyped-def]
    finished = None
    async for event in events:
        if isinstance(event, Finished):
            finished = event
    assert finished is not None
    return finished


def _next(worked: bool, case: FaultCase) -> str:
    if case.endpoint_is_the_fault:
        return "n/a (the endpoint is the fault)"
    return "yes" if worked else "NO"


def engine_surface(case: FaultCase, server: FaultServer) -> Outcome:
    return asyncio.run(_engine(case, server))


# -- firsttoken ask -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: bytes
    stderr: bytes


@contextlib.contextmanager
def _captured(stdin: bytes = b"") -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    """sys.stdin/stdout/stderr as byte buffers (what a terminal or a pipe would receive)."""
    out, err = io.BytesIO(), io.BytesIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    try:
        yield out, err
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdin, sys.stdout, sys.stderr = saved


def run_ask(*args: str) -> Ran:
    """`firsttoken ask ARGS` in this process (the command's own main(), real HTTP), its bytes."""
    from tui.cli import main

    with _captured() as (out, err):
        code = main(["ask", *args])
        sys.stdout.flush()
        sys.stderr.flush()
        return Ran(code, out.getvalue(), err.getvalue())


def ask_config(home: Path) -> Path:
    """A config with the matrix's short timeouts and no retries."""
    path = home / "matrix.toml"
    path.write_text(
        "[llm]\n"
        f"timeout_seconds = {TIMEOUT_S}\nmax_retries = 0\n"
        f"[llm.streaming]\nchunk_timeout_ms = {CHUNK_TIMEOUT_MS}\n"
        f"stall_timeout_ms = {STALL_TIMEOUT_MS}\n"
    )
    return path


def terminal_inert(data: bytes) -> bool:
    """No ESC, no C0 control but tab and newline, no C1 control (as UTF-8) in `data`."""
    text = data.decode("utf-8", errors="replace")
    return not any((ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F for c in text)


def ask_surface(case: FaultCase, server: FaultServer) -> Outcome:
    import os

    from tui.engine.store.database import Store
    from tui.locations import history_db_path

    home = Path(os.environ["FIRSTTOKEN_HOME"])
    base_url = case.base_url(server, "ask")
    common = ["--config", str(ask_config(home)), "--base-url", base_url, "--model", "demo-model"]
    os.environ["FIRSTTOKEN_API_KEY"] = TEST_KEY
    try:
        trimming = ["--budget", str(TRIM_BUDGET)] if case.trim else ["--no-trim"]
        first = run_ask(*common, *trimming, "hello")
        second = None if case.endpoint_is_the_fault else run_ask(*common, "hello again")
    finally:
        del os.environ["FIRSTTOKEN_API_KEY"]
    with Store(history_db_path(), read_only=True) as store:
        records = store.records(limit=2)
    stored = records[-1] if second is not None else records[0]  # the first request's record
    errors = [
        line.removeprefix("firsttoken: error: ")
        for line in first.stderr.decode().splitlines()
        if line.startswith("firsttoken: error: ")
    ]
    on_stdout = inert(case.sent) in first.stdout.decode()
    return Outcome(
        status=f"{stored['status']} (exit {first.code})",
        kind=stored["error_kind"] or "—",
        message=normalised(errors[0]) if errors else "—",
        partial_kept=_kept(case, stored["reply_text"] == case.sent and on_stdout),
        next_works=_next(second is not None and second.code == 0, case),
        terminal_inert="yes" if terminal_inert(first.stdout + first.stderr) else "NO",
    )


# -- the app ------------------------------------------------------------------------------------


def run_app(case: FaultCase, server: FaultServer) -> Outcome:
    """The chat app through App.run_test(): "hello", then "hello again" in the same chat."""
    return asyncio.run(_app(case, server))


async def _app(case: FaultCase, server: FaultServer) -> Outcome:
    import dataclasses
    import os

    from tui.config import ConfigFlags, load_config
    from tui.engine.store.database import Store
    from tui.wiring import Endpoint

    base_url = case.base_url(server, "app")
    config = dataclasses.replace(
        load_config(ConfigFlags(base_url=base_url, model="demo-model"), env={}),
        timeout_seconds=TIMEOUT_S,
        max_retries=0,
        chunk_timeout_ms=CHUNK_TIMEOUT_MS,
        stall_timeout_ms=STALL_TIMEOUT_MS,
        trim_strategy="priority" if case.trim else "none",
        token_budget=TRIM_BUDGET,
    )
    home = Path(os.environ["FIRSTTOKEN_HOME"])
    endpoint = Endpoint(base_url=base_url, api_key=TEST_KEY)
    with Store(home / f"app-{case.fault}-{case.trim}.sqlite3") as store:
        app = firsttoken_app(config, endpoint, store=store)
        async with app.run_test(size=(130, 40)) as pilot:
            await _until(
                pilot, lambda: app.chat.engine.connected and app.chat.engine.client is not None
            )
            first = await _app_send(pilot, app, "hello")
            errors = _error_blocks(app)
            replies = _reply_blocks(app)
            shown_reply = replies[-1] if replies else ""
            screens = [app.export_screenshot()]
            second = None
            if not case.endpoint_is_the_fault:
                second = await _app_send(pilot, app, "hello again")
                screens.append(app.export_screenshot())
            models = list(app.chat.engine.models)
        stored = store.records(limit=-1)[-1]  # the first request's record
    if case.fault == "esc-model":
        message = "model ids: " + ", ".join(m for m in models if m != "demo-model")
    else:
        message = errors[0] if errors else "—"
    kept = stored["reply_text"] == case.sent and shown_reply == inert(case.sent)
    return Outcome(
        status=first.status.value,
        kind=first.error_kind or "—",
        message=normalised(message),
        partial_kept=_kept(case, kept),
        next_works=_next(second is not None and second.status.value == "ok", case),
        terminal_inert="yes" if all(terminal_inert(s.encode()) for s in screens) else "NO",
    )


async def _until(pilot, done, timeout_s: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(timeout_s / 0.02)):
        if done():
            return
        await pilot.pause(0.02)
    raise AssertionError("the app did not get there")


async def _app_send(pilot, app, text: str):  # type: ignore[no-untyped-def]  # -> RequestRecord
    screen = app.chat_screen
    before = screen.last_record
    app.query_one("#prompt").focus()
    await pilot.press(*text, "enter")
    await _until(pilot, lambda: screen.last_record is not before and not screen.busy)
    await pilot.pause(0.05)
    return screen.last_record


def _error_blocks(app) -> list[str]:  # type: ignore[no-untyped-def]
    from tui.app.chat.message_view import ErrorMessage

    return [str(view.query_one(".body").render()) for view in app.query(ErrorMessage)]


def _reply_blocks(app) -> list[str]:  # type: ignore[no-untyped-def]
    from tui.app.chat.chat_log import ChatLog

    return [view.source for view in app.query_one(ChatLog).replies()]


SURFACES: dict[str, Surface] = {"engine": engine_surface, "ask": ask_surface, "app": run_app}


# -- the document ---------------------------------------------------------------------------------

HEADER = """\
# Faults: what each surface does

Generated from the results of `tests/engine/test_fault_matrix.py` by
`python -m tests.faults_report`; that test fails when this file differs from what it observes,
so it cannot drift. Do not edit it by hand.

Each fault is played once by a loopback test server (`tests/helpers/fault_server.py`) on the
first request to its base_url; the second request to the same base_url gets a healthy reply
("next request"). Retries are off (`max_retries = 0`) so each row shows the fault itself: with
retries on, a retryable failure before the first token (connection, DNS, 429, 5xx) is retried
first. `timeout_seconds = {timeout:g}`, `chunk_timeout_ms = {chunk}` (a longer gap is a pause),
`stall_timeout_ms = {stall}` (a longer gap is a stall); a trimmed request is
trimmed to {budget:,} tokens. Messages are shown as the terminal shows them (control characters
as visible stand-ins such as `␛`), loopback ports as `PORT`.

- **partial kept**: the text that arrived before the fault is all there: in the engine's final
  event (which every surface stores and shows), for `ask` in the history and on stdout, for the
  app in the history and in the reply's block on screen (inert).
- **terminal inert**: no ESC or C1 byte from server text reached stdout or stderr (`ask`), or
  the app's rendered screen after each request (Textual's `export_screenshot()`, which holds
  every character the app would write).
- The app runs through `App.run_test()` with its own history file; its message is the error
  block's text as shown (for the model-id row: the ids as the model picker lists them). It
  opens its connection at start (listing the models), so its first request goes over a kept
  connection: one closed before any answer there is taken for a stale keep-alive connection
  and sent again once on a new one, which is why that row is ok for the app.
"""


def render(results: dict[str, dict[str, Outcome]]) -> str:
    """The markdown document for `results[surface][case name]`."""
    parts = [
        HEADER.format(
            timeout=TIMEOUT_S, chunk=CHUNK_TIMEOUT_MS, stall=STALL_TIMEOUT_MS, budget=TRIM_BUDGET
        ),
    ]
    for surface, outcomes in results.items():
        with_terminal = any(o.terminal_inert != "—" for o in outcomes.values())
        columns = ["fault", "status", "error kind", "message", "partial kept", "next request"]
        if with_terminal:
            columns.append("terminal inert")
        parts.append(f"\n## {surface}\n")
        parts.append("| " + " | ".join(columns) + " |")
        parts.append("|" + "---|" * len(columns))
        for case in CASES:
            outcome = outcomes.get(case.name)
            if outcome is None:
                continue
            cells = [
                case.name,
                outcome.status,
                f"`{outcome.kind}`" if outcome.kind != "—" else "—",
                outcome.message,
                outcome.partial_kept,
                outcome.next_works,
            ]
            if with_terminal:
                cells.append(outcome.terminal_inert)
            parts.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(parts) + "\n"
