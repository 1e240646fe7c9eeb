"""A loopback HTTP/1.1 server of raw bytes that misbehaves once, for the fault tests.

`/<fault>/<tag>/v1/chat/completions` plays FAULTS[fault] on the first request under that path,
then answers like a healthy server (so "does the next request work?" can be asked on the same
base_url); `/<fault>/<tag>/v1/models` lists model ids (hostile ones for `esc-model`).
`/<fault1>+<fault2>+…/<tag>/v1` plays the faults in turn, one per chat request (a session
that meets several). It runs on
its own event loop in a daemon thread, so in-process tests and subprocesses can both use it.
What the demo endpoint cannot send lives here: escape sequences in replies, error bodies and
model ids, a 200 stream that ends cleanly without an event, very long lines, a reply of 1 MB.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

# Everything a hostile reply may try on a terminal: OSC 52 (clipboard), OSC 0/2 (titles, ended
# by BEL and by ST), CSI 2J (clear), cursor moves, DCS, and the 8-bit C1 forms of CSI and OSC.
HOSTILE = (
    "copy\x1b]52;c;aGFja2Vk\x07 title\x1b]0;owned\x07 \x1b]2;owned\x1b\\ clear\x1b[2J"
    " move\x1b[10;10H\x1b[3A\x1b7\x1b8 dcs\x1bP1$r0m\x1b\\ c1\x9b2J\x9d0;c1\x9c end"
)
HEALTHY_REPLY = ["All ", "is ", "well ", "here."]
PARTIAL = ["one ", "two ", "three "]  # what a reply that breaks off sends first
CONTEXT_MESSAGE = (
    "This model's maximum context length is 4096 tokens. However, your messages resulted in "
    "9000 tokens. Please reduce the length of the messages."
)
BIG_CHUNK = "x" * 4095 + "\n"
BIG_CHUNKS = 256  # 256 x 4 KiB = a 1 MiB reply
LONG_LINE = "y" * (512 * 1024)  # one event and one line of half a MiB
NUMBERED_WORDS = 5000  # `numbered`: "w0001 w0002 …", one word per chunk
NUMBERED_GAP_S = 0.02  # 50 words a second: a reply that is still streaming when it is killed


def _chunk(content: str | None = None, finish: str | None = None, model: str = "m") -> bytes:
    delta: dict[str, Any] = {} if content is None else {"content": content}
    if content is None and finish is None:
        delta = {"role": "assistant", "content": ""}
    body = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _framed(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _head(status: str, content_type: str, extra: tuple[str, ...] = (), length: int | None = None):
    framing = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    lines = [f"HTTP/1.1 {status}", f"Content-Type: {content_type}", framing, *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _error(status: str, message: str, code: str, extra: tuple[str, ...] = ()) -> bytes:
    body = json.dumps(
        {"error": {"message": message, "type": "invalid_request_error", "code": code}}
    ).encode()
    return _head(status, "application/json", extra, len(body)) + body


Writer = asyncio.StreamWriter
Play = Callable[[asyncio.StreamReader, Writer], Awaitable[bool]]  # False: close afterwards


async def _stream(writer: Writer, pieces: list[bytes], end: bool = True) -> None:
    writer.write(_head("200 OK", "text/event-stream"))
    for piece in pieces:
        writer.write(_framed(piece))
        await writer.drain()
    if end:
        writer.write(b"0\r\n\r\n")
        await writer.drain()


def _reply(tokens: list[str], model: str = "m") -> list[bytes]:
    return [
        _chunk(model=model),
        *(_chunk(token, model=model) for token in tokens),
        _chunk(finish="stop", model=model),
        b"data: [DONE]\n\n",
    ]


async def healthy(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _stream(writer, _reply(HEALTHY_REPLY))
    return True


async def _wait_for_close(reader: asyncio.StreamReader) -> None:
    while await reader.read(65536):
        pass


async def stall(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _stream(writer, [_chunk(), *(_chunk(t) for t in PARTIAL)], end=False)
    await _wait_for_close(reader)
    return False


async def drop_mid(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _stream(writer, [_chunk(), *(_chunk(t) for t in PARTIAL)], end=False)
    return False


async def drop_before(reader: asyncio.StreamReader, writer: Writer) -> bool:
    return False


async def drop_after_head(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _stream(writer, [], end=False)
    return False


async def not_json(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _stream(writer, [_chunk(), *(_chunk(t) for t in PARTIAL), b"data: {not json\n\n"])
    return True


async def empty(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _stream(writer, [])
    return True


async def no_finish(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _stream(writer, [_chunk(), *(_chunk(t) for t in PARTIAL)])
    return True


def _status(status: str, message: str, code: str, extra: tuple[str, ...] = ()) -> Play:
    async def play(reader: asyncio.StreamReader, writer: Writer) -> bool:
        writer.write(_error(status, message, code, extra))
        await writer.drain()
        return True

    return play


async def not_found_html(reader: asyncio.StreamReader, writer: Writer) -> bool:
    page = b"<!doctype html><title>Not Found</title><h1>Not Found</h1><p>Our website.</p>"
    writer.write(_head("404 Not Found", "text/html; charset=utf-8", length=len(page)) + page)
    await writer.drain()
    return True


async def hang(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _wait_for_close(reader)
    return False


async def big(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _stream(writer, _reply([BIG_CHUNK] * BIG_CHUNKS))
    return True


async def long_line(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _stream(writer, _reply([LONG_LINE]))
    return True


async def fence(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _stream(writer, _reply(["Here:\n\n", "```python\n", "print('never closed')\n"]))
    return True


async def esc_reply(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _stream(writer, _reply([HOSTILE[:40], HOSTILE[40:]]))
    return True


def numbered_word(n: int) -> str:
    return f"w{n:04d} " + ("\n\n" if n % 40 == 0 else "")


async def numbered(reader: asyncio.StreamReader, writer: Writer) -> bool:
    """A long, slow reply whose every word says how far it got."""
    writer.write(_head("200 OK", "text/event-stream"))
    writer.write(_framed(_chunk()))
    for n in range(1, NUMBERED_WORDS + 1):
        writer.write(_framed(_chunk(numbered_word(n))))
        await writer.drain()
        await asyncio.sleep(NUMBERED_GAP_S)
    for piece in (_chunk(finish="stop"), b"data: [DONE]\n\n"):
        writer.write(_framed(piece))
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return True


async def esc_model(reader: asyncio.StreamReader, writer: Writer) -> bool:
    await _stream(writer, _reply(HEALTHY_REPLY, model=f"evil{HOSTILE}"))
    return True


NOT_UTF8_WORD = "caf\ufffd "  # the word `not-utf8` sends with a Latin-1 byte, as shown


async def not_utf8(reader: asyncio.StreamReader, writer: Writer) -> bool:
    bad = _chunk("cafX ").replace(b'"cafX ', b'"caf\xe9 ')
    await _stream(writer, [_chunk(), *(_chunk(t) for t in PARTIAL), bad, *_reply([])[2:]])
    return True


async def gzip_cut(reader: asyncio.StreamReader, writer: Writer) -> bool:
    """Whole events, gzip-compressed and flushed, then a clean end of the chunked body: the
    gzip stream itself never ends."""
    packer = zlib.compressobj(wbits=zlib.MAX_WBITS | 16)
    events = b"".join([_chunk(), *(_chunk(t) for t in PARTIAL)])
    data = packer.compress(events) + packer.flush(zlib.Z_SYNC_FLUSH)
    writer.write(_head("200 OK", "text/event-stream", ("Content-Encoding: gzip",)))
    writer.write(_framed(data) + b"0\r\n\r\n")
    await writer.drain()
    return True


GZIP_BOMB = gzip.compress(b"\n" * (80 << 20), compresslevel=9)  # ~80 KB that expand to 80 MiB


async def gzip_bomb(reader: asyncio.StreamReader, writer: Writer) -> bool:
    extra = ("Content-Encoding: gzip",)
    writer.write(_head("200 OK", "text/event-stream", extra, len(GZIP_BOMB)) + GZIP_BOMB)
    await writer.drain()
    return False


FAULTS: dict[str, Play] = {
    "stall": stall,
    "drop-mid": drop_mid,
    "drop-before": drop_before,
    "drop-after-head": drop_after_head,
    "not-json": not_json,
    "empty": empty,
    "no-finish": no_finish,
    "500": _status("500 Internal Server Error", "The server had an error.", "internal_error"),
    "503": _status("503 Service Unavailable", "The engine is overloaded.", "unavailable"),
    "429": _status("429 Too Many Requests", "Rate limit reached.", "rate", ("Retry-After: 1",)),
    "401": _status("401 Unauthorized", "Incorrect API key provided.", "invalid_api_key"),
    "403": _status("403 Forbidden", "This key may not use this model.", "forbidden"),
    "404-api": _status("404 Not Found", "Invalid URL (POST /chat/completions)", "unknown_url"),
    "404-html": not_found_html,
    "context": _status("400 Bad Request", CONTEXT_MESSAGE, "context_length_exceeded"),
    "hang": hang,
    "big": big,
    "long-line": long_line,
    "fence": fence,
    "esc-reply": esc_reply,
    "esc-error": _status("500 Internal Server Error", f"boom {HOSTILE}", "internal_error"),
    "esc-model": esc_model,
    "numbered": numbered,
    "not-utf8": not_utf8,
    "gzip-cut": gzip_cut,
    "gzip-bomb": gzip_bomb,
}


class FaultServer:
    """FAULTS behind real HTTP on 127.0.0.1, in a daemon thread: `with FaultServer() as s:`."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.AbstractServer | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._played: dict[str, int] = {}  # chat requests answered with a fault, by prefix
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # method, target, headers
        self.bodies: list[bytes] = []  # each request's body, in the same order
        self.port = 0

    def url(self, fault: str, tag: str = "t") -> str:
        """The base_url whose first chat request gets `fault`."""
        return f"http://127.0.0.1:{self.port}/{fault}/{tag}/v1"

    def __enter__(self) -> FaultServer:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        future.result(timeout=10)
        return self

    def __exit__(self, *_: object) -> None:
        async def stop() -> None:
            if self._server is not None:
                self._server.close()
            for task in asyncio.all_tasks() - {asyncio.current_task()}:
                task.cancel()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        try:
            while True:
                try:
                    first = await reader.readexactly(1)
                    if first == b"\x16":  # a TLS handshake: answer as a plain HTTP server does
                        writer.write(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
                        await writer.drain()
                        return
                    head = first + await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = [*lines[0].split(" "), "", ""][:3]
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name:
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                self.requests.append((method, target, headers))
                self.bodies.append(body)
                streaming = b'"stream": false' not in body and b'"stream":false' not in body
                if not await self._answer(target.split("?")[0], reader, writer, streaming):
                    return
        except (ConnectionError, asyncio.CancelledError):
            return
        finally:
            writer.close()

    async def _answer(
        self, path: str, reader: asyncio.StreamReader, writer: Writer, streaming: bool
    ) -> bool:
        parts = path.strip("/").split("/")
        faults = parts[0].split("+") if parts else [""]
        prefix = "/".join(parts[:2])
        if path.endswith("/models"):
            hostile = "esc-model" in faults
            ids = ["good-model", f"evil{HOSTILE}"] if hostile else ["good-model"]
            body = json.dumps(
                {"object": "list", "data": [{"id": i, "object": "model"} for i in ids]}
            ).encode()
            writer.write(_head("200 OK", "application/json", length=len(body)) + body)
            await writer.drain()
            return True
        if not path.endswith("/chat/completions"):
            # A tokenizer probe or any other path: not found, and no fault is used up on it.
            body = b'{"error": {"message": "not found"}}'
            writer.write(_head("404 Not Found", "application/json", length=len(body)) + body)
            await writer.drain()
            return True
        played = self._played.get(prefix, 0)
        if played < len(faults) and faults[played] in FAULTS:
            self._played[prefix] = played + 1
            return await FAULTS[faults[played]](reader, writer)
        if not streaming:  # one JSON body (the faults are all played on streamed requests)
            message = {"role": "assistant", "content": "".join(HEALTHY_REPLY)}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            whole = json.dumps({"id": "c1", "object": "chat.completion", "choices": [choice]})
            writer.write(_head("200 OK", "application/json", length=len(whole)) + whole.encode())
            await writer.drain()
            return True
        return await healthy(reader, writer)
