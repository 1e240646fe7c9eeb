"""The embedded OpenAI-compatible demo endpoint: a latency model behind real HTTP on loopback.

GET /v1/models, POST /v1/chat/completions (SSE streaming or one JSON body), GET /demo/requests
(the request log). A path prefix /fault/<spec>/v1/... injects one failure (see CONTRACTS.md).
The first content token is due at receipt + TTFT, token i at first + i / rate: absolute
deadlines, so sleep overshoot never accumulates, and every token already due goes out in one
write (as separate SSE events) — that keeps 2,000 tokens/s accurate despite ~1 ms sleeps.
Every number here is simulated, and the replies say so.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import secrets
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.engine import demo_http as http
from tui.engine.demo_reply import ReplySummary, reply_tokens, requested_length
from tui.engine.latency_model import LatencyModel
from tui.engine.tokens import get_counter

DEMO_MODEL_ID = "firsttoken-demo"
MAX_TOKENS_PER_WRITE = 4096  # bounds one batch's memory when a client reads slowly

_FAULT_PATH = re.compile(r"^/fault/([^/]+)(/.*)?$")
_STATUS_FAULT = re.compile(r"^(401|403|429|500|503)(?:x(\d+))?$")
_STALL_FAULT = re.compile(r"^stall-(\d+)$")
_SHAPE_FAULTS = ("early", "badjson", "context", "empty", "nousage", "hang", "drop")
FAULT_SPECS = ("401", "403", "429", "429x<N>", "500", "503x<N>", "stall-<ms>", *_SHAPE_FAULTS)
EARLY_TOKENS = 5  # early: this many tokens, then the connection closes
BADJSON_TOKENS = 3  # badjson: this many tokens, then `data: {not json`
STALL_AFTER_TOKENS = 5  # stall-<ms>: the pause comes after this many tokens

# OpenAI's error shapes: (message, type, code).
_ERRORS: dict[int, tuple[str, str, str]] = {
    401: (
        "Incorrect API key provided (simulated fault).",
        "invalid_request_error",
        "invalid_api_key",
    ),
    403: ("This key may not use this model (simulated fault).", "request_forbidden", "forbidden"),
    429: (
        "Rate limit reached for requests (simulated fault). Please try again in 1s.",
        "requests",
        "rate_limit_exceeded",
    ),
    500: (
        "The server had an error while processing your request (simulated fault).",
        "server_error",
        "internal_error",
    ),
    503: (
        "The engine is currently overloaded, please try again later (simulated fault).",
        "server_error",
        "service_unavailable",
    ),
}


@dataclass(frozen=True)
class Fault:
    spec: str
    status: int | None = None  # answer with this HTTP error...
    times: int | None = None  # ...for the first `times` requests under this spec (None: always)
    stall_ms: float = 0.0
    kind: str | None = None  # one of _SHAPE_FAULTS


def parse_fault(spec: str) -> Fault | None:
    """The fault a path segment asks for, or None when the spec is unknown."""
    if match := _STATUS_FAULT.match(spec):
        times = int(match.group(2)) if match.group(2) else None
        return Fault(spec, status=int(match.group(1)), times=times)
    if match := _STALL_FAULT.match(spec):
        return Fault(spec, stall_ms=float(match.group(1)))
    return Fault(spec, kind=spec) if spec in _SHAPE_FAULTS else None


def count_prompt_tokens(model: str, messages: list[dict]) -> int:
    """Prompt tokens as the client counts them (same TokenCounter), so both sides agree."""
    return get_counter(model).count_messages(messages)


def _error_body(message: str, type_: str, code: str | None, param: str | None = None) -> bytes:
    error = {"message": message, "type": type_, "param": param, "code": code}
    return json.dumps({"error": error}).encode()


async def _sleep_until(deadline: float) -> None:
    """Sleep until perf_counter() >= deadline (re-checked: never wakes early)."""
    while (remaining := deadline - time.perf_counter()) > 0:
        await asyncio.sleep(remaining)


class _Schedule:
    """Absolute deadlines: token i is due at first_due + i / rate (+ any pause so far)."""

    def __init__(self, first_due: float, model: LatencyModel) -> None:
        self.first_due = first_due
        self.model = model
        self.shift = 0.0

    def due(self, index: int) -> float:
        return self.first_due + self.model.token_offset_s(index) + self.shift

    def pause(self, index: int, until: float) -> None:
        """Token `index` (and every later one, at the same rate) waits until `until`."""
        self.shift = max(self.shift, until - (self.first_due + self.model.token_offset_s(index)))


class _Exchange:
    """One request/response on a connection: the writer, the response framing, the log entry."""

    def __init__(self, request: http.Request, writer: asyncio.StreamWriter, entry: dict) -> None:
        self.request = request
        self.writer = writer
        self.entry = entry
        self.keep_alive = request.keep_alive
        self.chunked = request.chunked_ok

    async def send(self, data: bytes) -> float:
        """Write, stamp the moment the bytes reached the socket, then wait for buffer room."""
        self.writer.write(data)
        written_at = time.perf_counter()
        if self.entry.get("first_byte_at") is None:
            self.entry["first_byte_at"] = written_at
        await self.writer.drain()
        return written_at

    async def send_full(self, status: int, body: bytes, content_type: str, **kw: Any) -> None:
        self.entry["status"] = status
        await self.send(
            http.full_response(status, body, content_type, keep_alive=self.keep_alive, **kw)
        )

    async def send_error(
        self, status: int, message: str, type_: str, code: str | None, **kw: Any
    ) -> None:
        param = kw.pop("param", None)
        body = _error_body(message, type_, code, param)
        await self.send_full(status, body, "application/json", **kw)

    def frame(self, event: bytes) -> bytes:
        return http.chunk(event) if self.chunked else event

    async def start_stream(self) -> float:
        self.entry["status"] = 200
        headers = [
            ("Content-Type", "text/event-stream; charset=utf-8"),
            ("Cache-Control", "no-cache"),
            ("X-Request-Id", self.entry["id"]),
        ]
        if self.chunked:
            headers.append(("Transfer-Encoding", "chunked"))
        else:  # HTTP/1.0: the end of the body is the end of the connection
            self.keep_alive = False
        return await self.send(http.response_head(200, headers, keep_alive=self.keep_alive))


class DemoServer:
    """The demo endpoint on an asyncio loop; `await start()`, then `base_url` is live."""

    def __init__(
        self,
        model: LatencyModel,
        host: str = "127.0.0.1",
        port: int = 0,
        request_log: Path | None = None,
    ) -> None:
        self.model = model
        self.host = host
        self.port = port
        self.request_log = request_log
        self.requests: list[dict] = []
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task] = set()
        self._warmup: asyncio.Task | None = None
        self._fault_counts: dict[str, int] = {}
        self._count = 0
        self._id_prefix = f"chatcmpl-demo{secrets.token_hex(3)}"
        self._log_failed = False

    @property
    def root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    async def start(self) -> None:
        """Bind and listen; OSError (e.g. EADDRINUSE) when the port cannot be had."""
        self._server = await asyncio.start_server(self._on_connection, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        if self.request_log is not None:
            self.request_log.parent.mkdir(parents=True, exist_ok=True)
        # Loading the vocabulary takes ~0.5 s: do it now, off the loop, not on the first request.
        self._warmup = asyncio.ensure_future(
            asyncio.to_thread(
                count_prompt_tokens, DEMO_MODEL_ID, [{"role": "user", "content": "hi"}]
            )
        )

    async def stop(self) -> None:
        """Stop listening and close every open connection (streams in flight end abruptly)."""
        if self._server is None:
            return
        server, self._server = self._server, None
        server.close()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        if self._warmup is not None:
            self._warmup.cancel()
        await server.wait_closed()

    # -- connections -------------------------------------------------------------------------

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while True:
                try:
                    request = await http.read_request(reader, writer)
                except http.HttpError as e:
                    writer.write(http.error_page(e.status, e.reason))
                    await writer.drain()
                    break
                if request is None:
                    break
                received_at = time.perf_counter()
                if not await self._dispatch(request, received_at, reader, writer):
                    break
                if not request.keep_alive:
                    break
        except (OSError, asyncio.IncompleteReadError):
            pass  # the client went away (reset, broken pipe, half a request): nothing to say
        except Exception as error:  # a bug must not stop the server; one line, not a traceback
            print(f"firsttoken demo: internal error: {error!r}", file=sys.stderr)
        except asyncio.CancelledError:
            # stop() cancels open connections. Ending normally matters: on Python 3.11 the
            # stream protocol's done-callback logs a traceback for a cancelled handler task.
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()

    async def _dispatch(
        self,
        request: http.Request,
        received_at: float,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        """Answer one request; False when the connection must close afterwards."""
        path, fault = request.path, None
        if match := _FAULT_PATH.match(path):
            path = match.group(2) or "/"
            fault = parse_fault(match.group(1))
            if fault is None:
                known = ", ".join(FAULT_SPECS)
                page = f"unknown fault spec {match.group(1)!r}; known: {known}"
                writer.write(http.error_page(404, page, keep_alive=request.keep_alive))
                await writer.drain()
                return True
        if path == "/v1/chat/completions":
            if request.method != "POST":
                return await self._method_not_allowed(request, writer, "POST")
            return await self._chat(request, received_at, fault, reader, writer)
        if path == "/v1/models" or path.startswith("/v1/models/"):
            if request.method not in ("GET", "HEAD"):
                return await self._method_not_allowed(request, writer, "GET")
            return await self._models(request, path, fault, reader, writer)
        if path.startswith("/v1/"):
            # The API answers unknown routes in JSON, as OpenAI does.
            body = _error_body(
                f"Invalid URL ({request.method} {request.path})",
                "invalid_request_error",
                "unknown_url",
            )
            writer.write(
                http.full_response(404, body, "application/json", keep_alive=request.keep_alive)
            )
            await writer.drain()
            return True
        if fault is None and path == "/demo/requests" and request.method in ("GET", "HEAD"):
            body = json.dumps(self.requests, ensure_ascii=False).encode()
            head_only = request.method == "HEAD"
            response = http.full_response(
                200, body, "application/json", keep_alive=request.keep_alive, head_only=head_only
            )
            writer.write(response)
            await writer.drain()
            return True
        if fault is None and path == "/" and request.method in ("GET", "HEAD"):
            page = (
                "<!doctype html><title>firsttoken demo endpoint</title>"
                "<h1>firsttoken demo endpoint (simulated)</h1>"
                f"<p>OpenAI-compatible API at <code>{self.base_url}</code></p>\n"
            ).encode()
            response = http.full_response(
                200,
                page,
                "text/html; charset=utf-8",
                keep_alive=request.keep_alive,
                head_only=request.method == "HEAD",
            )
            writer.write(response)
            await writer.drain()
            return True
        # Anything else is a website's 404 page: a base_url without /v1 lands here.
        writer.write(
            http.error_page(404, f"no page at {request.path}", keep_alive=request.keep_alive)
        )
        await writer.drain()
        return True

    async def _method_not_allowed(
        self, request: http.Request, writer: asyncio.StreamWriter, allowed: str
    ) -> bool:
        body = _error_body(
            f"Method {request.method} not allowed for {request.path}; use {allowed}.",
            "invalid_request_error",
            "method_not_supported",
        )
        writer.write(
            http.full_response(
                405,
                body,
                "application/json",
                keep_alive=request.keep_alive,
                extra=[("Allow", allowed)],
            )
        )
        await writer.drain()
        return True

    def _status_fault(self, fault: Fault | None) -> int | None:
        """The error status this request gets, counting requests per spec for `xN` faults."""
        if fault is None or fault.status is None:
            return None
        seen = self._fault_counts.get(fault.spec, 0) + 1
        self._fault_counts[fault.spec] = seen
        return fault.status if fault.times is None or seen <= fault.times else None

    def _error_exchange(self, status: int) -> tuple[str, str, str, list[tuple[str, str]]]:
        message, type_, code = _ERRORS[status]
        extra = [("Retry-After", "1")] if status == 429 else []
        return message, type_, code, extra

    # -- /v1/models ----------------------------------------------------------------------------

    def model_ids(self) -> list[str]:
        return [DEMO_MODEL_ID, f"demo-{self.model.preset}"]

    async def _models(
        self,
        request: http.Request,
        path: str,
        fault: Fault | None,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        exchange = _Exchange(request, writer, {"id": ""})
        if fault is not None and fault.kind == "drop":
            return False
        if fault is not None and fault.kind == "hang":
            await _wait_for_close(reader)
            return False
        if (status := self._status_fault(fault)) is not None:
            message, type_, code, extra = self._error_exchange(status)
            await exchange.send_error(status, message, type_, code, extra=extra)
            return True
        created = int(time.time())
        cards = [
            {
                "id": name,
                "object": "model",
                "created": created,
                "owned_by": "firsttoken (simulated)",
            }
            for name in self.model_ids()
        ]
        if path == "/v1/models":
            payload: dict = {"object": "list", "data": cards}
        else:
            name = path.removeprefix("/v1/models/")
            payload = next((c for c in cards if c["id"] == name), {**cards[0], "id": name})
        head_only = request.method == "HEAD"
        await exchange.send_full(
            200, json.dumps(payload).encode(), "application/json", head_only=head_only
        )
        return True

    # -- /v1/chat/completions ------------------------------------------------------------------

    async def _chat(
        self,
        request: http.Request,
        received_at: float,
        fault: Fault | None,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        received_at_epoch = time.time()
        bad = _Exchange(request, writer, {"id": ""})
        try:
            body = json.loads(request.body)
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
        if not isinstance(body, dict):
            await bad.send_error(
                400,
                "We could not parse the JSON body of your request.",
                "invalid_request_error",
                None,
            )
            return True
        problem = _invalid_chat_body(body)
        if problem is not None:
            message, param = problem
            await bad.send_error(
                400, message, "invalid_request_error", "invalid_value", param=param
            )
            return True

        messages: list[dict] = body["messages"]
        model_name = body.get("model") if isinstance(body.get("model"), str) else DEMO_MODEL_ID
        stream = body.get("stream") is True
        options = body.get("stream_options")
        include_usage = (
            stream and isinstance(options, dict) and options.get("include_usage") is True
        )
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        prompt_tokens = await asyncio.to_thread(count_prompt_tokens, model_name, messages)
        self._count += 1
        entry: dict[str, Any] = {
            "id": f"{self._id_prefix}-{self._count:06d}",
            "path": request.path,
            "fault": fault.spec if fault else None,
            "model": model_name,
            "stream": stream,
            "include_usage": include_usage,
            "max_tokens": max_tokens,
            "temperature": body.get("temperature"),
            "message_count": len(messages),
            "messages": messages,
            "prompt_tokens": prompt_tokens,
            "received_at": received_at,
            "first_byte_at": None,
            "first_token_at": None,
            "last_token_at": None,
            "done_at": None,
            "received_at_epoch": received_at_epoch,
            "output_tokens": 0,
            "prefill_ms": self.model.prefill_ms(prompt_tokens),
            # Beyond the contract, for the curious: what the model scheduled and how it ended.
            "simulated_ttft_ms": self.model.ttft_ms(prompt_tokens, self._count),
            "preset": self.model.preset,
            "status": None,
            "finish_reason": None,
            "client_disconnected": False,
        }
        self.requests.append(entry)
        exchange = _Exchange(request, writer, entry)
        try:
            return await self._answer_chat(exchange, fault, reader, max_tokens)
        except OSError:
            entry["client_disconnected"] = True
            raise
        finally:
            entry["done_at"] = time.perf_counter()
            self._append_log(entry)

    async def _answer_chat(
        self,
        ex: _Exchange,
        fault: Fault | None,
        reader: asyncio.StreamReader,
        max_tokens: int | None,
    ) -> bool:
        entry, model = ex.entry, self.model
        received_at = entry["received_at"]
        kind = fault.kind if fault else None
        if kind == "drop":
            return False
        if kind == "hang":
            await _wait_for_close(reader)
            return False
        answer_at = received_at + (model.rtt_ms + model.queue_ms) / 1000
        if (status := self._status_fault(fault)) is not None:
            await _sleep_until(received_at + model.rtt_ms / 1000)
            message, type_, code, extra = self._error_exchange(status)
            await ex.send_error(status, message, type_, code, extra=extra)
            return ex.keep_alive
        if kind == "context":
            await _sleep_until(received_at + model.rtt_ms / 1000)
            limit = 8192 if entry["prompt_tokens"] > 8192 else max(1, entry["prompt_tokens"] // 2)
            message = (
                f"This model's maximum context length is {limit} tokens. However, your messages "
                f"resulted in {entry['prompt_tokens']} tokens. Please reduce the length of the "
                "messages. (simulated fault)"
            )
            await ex.send_error(
                400, message, "invalid_request_error", "context_length_exceeded", param="messages"
            )
            return ex.keep_alive

        wanted = requested_length(entry["messages"])
        target = model.reply_tokens if wanted is None else wanted
        capped = max_tokens is not None and max_tokens < target
        count = max_tokens if capped else target
        entry["finish_reason"] = "length" if capped else "stop"
        summary = ReplySummary(
            messages=entry["messages"],
            prompt_tokens=entry["prompt_tokens"],
            prefill_ms=entry["prefill_ms"],
            model=entry["model"],
            preset=model.preset,
            stream=entry["stream"],
            fixed_ms=model.rtt_ms + model.queue_ms,
            prefill_ms_per_token=model.prefill_ms_per_token,
            decode_tokens_per_s=model.decode_tokens_per_s,
        )
        tokens = reply_tokens(summary, count)
        schedule = _Schedule(received_at + entry["simulated_ttft_ms"] / 1000, model)
        stall_s = fault.stall_ms / 1000 if fault else 0.0
        if entry["stream"]:
            return await self._stream(ex, kind, tokens, schedule, answer_at, stall_s)
        schedule.shift = stall_s
        return await self._whole(ex, kind, tokens, schedule)

    async def _stream(
        self,
        ex: _Exchange,
        kind: str | None,
        tokens: list[str],
        schedule: _Schedule,
        answer_at: float,
        stall_s: float,
    ) -> bool:
        entry = ex.entry
        include_usage = entry["include_usage"] and kind != "nousage"
        base = {
            "id": entry["id"],
            "object": "chat.completion.chunk",
            "created": int(entry["received_at_epoch"]),
            "model": entry["model"],
        }
        usage_null = ',"usage":null' if include_usage else ""

        def event(choices: list[dict], **extra: Any) -> bytes:
            payload = {**base, "choices": choices, **extra}
            if include_usage and "usage" not in extra:
                payload["usage"] = None
            return ex.frame(b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n")

        # The content events are the hot path: a prebuilt prefix and suffix around the token.
        prefix = (
            b"data: "
            + json.dumps(base)[:-1].encode()
            + b',"choices":[{"index":0,"delta":{"content":'
        )
        suffix = b'},"logprobs":null,"finish_reason":null}]' + usage_null.encode() + b"}\n\n"

        def content(token: str) -> bytes:
            return ex.frame(prefix + json.dumps(token, ensure_ascii=False).encode() + suffix)

        await _sleep_until(answer_at)
        await ex.start_stream()
        if kind == "empty":  # llama.cpp on context overflow: 200, SSE headers, then nothing
            return False
        role = {
            "index": 0,
            "delta": {"role": "assistant", "content": ""},
            "logprobs": None,
            "finish_reason": None,
        }
        await ex.send(event([role]))

        limit = {"early": EARLY_TOKENS, "badjson": BADJSON_TOKENS}.get(kind or "", len(tokens))
        limit = min(limit, len(tokens))
        # stall-<ms>: a batch never crosses the pause, which starts when token 5 was written.
        pause_at = STALL_AFTER_TOKENS if stall_s > 0 else limit
        sent = 0
        while sent < limit:
            await _sleep_until(schedule.due(sent))
            now = time.perf_counter()
            stop = min(limit, pause_at) if sent < pause_at else limit
            end = sent + 1
            while end < stop and end - sent < MAX_TOKENS_PER_WRITE and schedule.due(end) <= now:
                end += 1
            written_at = await ex.send(b"".join(content(t) for t in tokens[sent:end]))
            if entry["first_token_at"] is None:
                entry["first_token_at"] = written_at
            entry["last_token_at"] = written_at
            entry["output_tokens"] = end
            if end == pause_at and stall_s > 0:
                schedule.pause(end, written_at + stall_s)
            sent = end

        if kind == "early":  # the connection closes mid-stream: no finish, no [DONE]
            return False
        if kind == "badjson":
            await ex.send(ex.frame(b"data: {not json\n\n"))
        else:
            finish = {
                "index": 0,
                "delta": {},
                "logprobs": None,
                "finish_reason": entry["finish_reason"],
            }
            tail = event([finish])
            if include_usage:
                tail += event([], usage=_usage(entry["prompt_tokens"], sent))
            await ex.send(tail)
        await ex.send(ex.frame(b"data: [DONE]\n\n") + (http.LAST_CHUNK if ex.chunked else b""))
        return ex.keep_alive

    async def _whole(
        self, ex: _Exchange, kind: str | None, tokens: list[str], schedule: _Schedule
    ) -> bool:
        entry = ex.entry
        if kind == "early":  # the connection dies before the body is sent
            await _sleep_until(schedule.due(EARLY_TOKENS - 1))
            return False
        await _sleep_until(schedule.due(max(len(tokens) - 1, 0)))
        if kind == "empty":
            await ex.send_full(200, b"", "application/json")
            return ex.keep_alive
        if kind == "badjson":
            await ex.send_full(200, b"{not json", "application/json")
            return ex.keep_alive
        message = {"role": "assistant", "content": "".join(tokens), "refusal": None}
        completion: dict[str, Any] = {
            "id": entry["id"],
            "object": "chat.completion",
            "created": int(entry["received_at_epoch"]),
            "model": entry["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": entry["finish_reason"],
                }
            ],
        }
        if kind != "nousage":
            completion["usage"] = _usage(entry["prompt_tokens"], len(tokens))
        body = json.dumps(completion, ensure_ascii=False).encode()
        await ex.send_full(200, body, "application/json")
        # Without streaming the first token arrives with the whole body.
        entry["first_token_at"] = entry["last_token_at"] = entry["first_byte_at"]
        entry["output_tokens"] = len(tokens)
        return ex.keep_alive

    def _append_log(self, entry: dict) -> None:
        if self.request_log is None:
            return
        try:
            with self.request_log.open("a", encoding="utf-8") as log:
                log.write(json.dumps(entry, ensure_ascii=False) + "\n")
                log.flush()
        except OSError as e:
            if not self._log_failed:  # say it once, keep serving
                self._log_failed = True
                print(
                    f"firsttoken demo: cannot write request log {self.request_log}: {e}",
                    file=sys.stderr,
                )


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _invalid_chat_body(body: dict) -> tuple[str, str] | None:
    """(message, param) when the body is not a chat request we can answer."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array of message objects.", "messages"
    if not all(isinstance(m, dict) for m in messages):
        return "each entry of 'messages' must be an object with a role.", "messages"
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            return f"'{key}' must be an integer of at least 1, got {value!r}.", key
    return None


async def _wait_for_close(reader: asyncio.StreamReader) -> None:
    """`hang`: answer nothing; return once the client gives up and closes the connection."""
    while await reader.read(65536):
        pass  # anything the client still sends is ignored, as a hung server would


class DemoThread:
    """A DemoServer on its own event loop in a daemon thread (for sync callers and the app)."""

    def __init__(
        self, server: DemoServer, loop: asyncio.AbstractEventLoop, thread: threading.Thread
    ):
        self.server = server
        self._loop = loop
        self._thread = thread
        self._final: list[dict] | None = None

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def root_url(self) -> str:
        return self.server.root_url

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def requests(self) -> list[dict]:
        """A copy of the request log, taken on the server's own loop (so it is consistent)."""
        if self._final is not None:
            return [dict(entry) for entry in self._final]

        async def snapshot() -> list[dict]:
            return [dict(entry) for entry in self.server.requests]

        return asyncio.run_coroutine_threadsafe(snapshot(), self._loop).result(timeout=5)

    def stop(self, timeout: float = 5.0) -> None:
        """Close the server and its connections, end the loop, join the thread. Idempotent."""
        if self._final is not None:
            return
        self._final = [dict(entry) for entry in self.server.requests]
        if not self._loop.is_closed():
            try:
                future = asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop)
                future.result(timeout=timeout)
            except (RuntimeError, concurrent.futures.TimeoutError):
                pass  # the loop is already gone or stuck: the daemon thread dies with us
            else:
                self._final = [dict(entry) for entry in self.server.requests]
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)

    def __enter__(self) -> DemoThread:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_demo_in_thread(
    model: LatencyModel, port: int = 0, request_log: Path | None = None, host: str = "127.0.0.1"
) -> DemoThread:
    """Start the demo endpoint in a daemon thread; returns once it is listening.

    Raises what binding raised (OSError for a port in use) in the caller's thread.
    """
    server = DemoServer(model, host=host, port=port, request_log=request_log)
    ready = threading.Event()
    failure: list[BaseException] = []
    loop = asyncio.new_event_loop()

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.start())
        except BaseException as e:  # handed to the caller, raised there
            failure.append(e)
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(server.stop())
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()

    thread = threading.Thread(target=run, name="firsttoken-demo-endpoint", daemon=True)
    thread.start()
    ready.wait()
    if failure:
        raise failure[0]
    return DemoThread(server, loop, thread)
