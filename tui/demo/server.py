"""The embedded OpenAI-compatible demo endpoint: a latency model behind real HTTP on loopback.

GET /v1/models, POST /v1/chat/completions (SSE streaming or one JSON body), the tokenizer
endpoints of the server it plays (tokenizer_api.py), GET /demo/requests (the request log). A
path prefix /fault/<spec>/v1/... injects one failure (faults.py lists the specs). This module
routes requests and keeps the request log; the parts live beside it: http.py (HTTP/1.1),
exchange.py (one response and its timestamps), dialects.py (which real server it plays),
prompt.py (prompt counts and the prefix cache), model_kinds.py (reasoning model ids), chat.py
(what a chat request gets), plan.py (the reply's tokens), stream.py and whole.py (SSE or JSON
on the latency schedule), reply.py (reply text) and thread.py (a server in a daemon thread).
Every number here is simulated, and the replies say so.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from tui.demo import http
from tui.demo.chat import answer_chat, invalid_chat_body
from tui.demo.dialects import DIALECTS
from tui.demo.exchange import Exchange, error_body
from tui.demo.faults import (
    FAULT_PATH,
    FAULT_SPECS,
    Fault,
    FaultCounter,
    parse_fault,
)
from tui.demo.latency_model import PRESETS, LatencyModel
from tui.demo.model_kinds import MODEL_KINDS, model_kind
from tui.demo.models import answer_models
from tui.demo.prefix import PrefixCache
from tui.demo.prompt import count_prompt, count_prompt_tokens
from tui.demo.tokenizer_api import serve_tokenizer

DEMO_MODEL_ID = "firsttoken-demo"
__all__ = ["DEMO_MODEL_ID", "DemoServer", "count_prompt_tokens"]


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
        self.dialect = DIALECTS[model.server]
        self.host = host
        self.port = port
        self.request_log = request_log
        self.requests: list[dict] = []
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task] = set()
        self._warmup: asyncio.Task | None = None
        self._faults = FaultCounter()
        self._prefix = PrefixCache()
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
        # The OpenAI dialect counts with the client's vocabulary, which takes ~0.5 s to load:
        # load it now, off the loop, not on the first request. The others count with their own.
        hello = [{"role": "user", "content": "hi"}]
        self._warmup = asyncio.ensure_future(
            asyncio.to_thread(count_prompt, self.dialect, DEMO_MODEL_ID, hello, 0, None)
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
        if match := FAULT_PATH.match(path):
            path = match.group(2) or "/"
            fault = parse_fault(match.group(1))
            if fault is None:
                known = ", ".join(FAULT_SPECS)
                problem = f"unknown fault spec {match.group(1)!r}; known: {known}"
                writer.write(http.error_page(404, problem, keep_alive=request.keep_alive))
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
        if path in self.dialect.tokenizer_paths:
            if request.method != "POST":
                return await self._method_not_allowed(request, writer, "POST")
            return await self._tokenizer(request, path, fault, reader, writer)
        if path.startswith("/v1/"):
            # The API answers unknown routes in JSON, as OpenAI does.
            body = error_body(
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
            listing = json.dumps(self.requests, ensure_ascii=False).encode()
            head_only = request.method == "HEAD"
            response = http.full_response(
                200, listing, "application/json", keep_alive=request.keep_alive, head_only=head_only
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
        body = error_body(
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

    # -- /v1/models ----------------------------------------------------------------------------

    def model_ids(self) -> list[str]:
        """The server's own model, one per latency preset (a race of simulated speeds), and
        the models that behave like particular real ones (model_kinds.py)."""
        presets = [f"demo-{name}" for name in PRESETS if name != "instant"]
        own = f"demo-{self.model.preset}"
        return [DEMO_MODEL_ID, *dict.fromkeys([own, *presets]), *MODEL_KINDS]

    def latency_for(self, model_name: str) -> LatencyModel:
        """The latency a request for `model_name` gets: a `demo-<preset>` model id has that
        preset's prefill, decode rate and round trip (with this server's jitter, reply length
        and dialect); any other id, the server's own."""
        preset = model_name.removeprefix("demo-")
        if model_name == preset or preset not in PRESETS or preset == self.model.preset:
            return self.model
        own = self.model
        return replace(
            PRESETS[preset],
            jitter_ms=own.jitter_ms,
            seed=own.seed,
            reply_tokens=own.reply_tokens,
            server=own.server,
        )

    async def _models(
        self,
        request: http.Request,
        path: str,
        fault: Fault | None,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        exchange = Exchange(request, writer, {"id": ""})
        window = self.dialect.context_window if self.dialect.name == "llamacpp" else None
        return await answer_models(
            exchange, path, self.model_ids(), fault, self._faults, reader, window
        )

    # -- the tokenizer endpoints ----------------------------------------------------------------

    async def _tokenizer(
        self,
        request: http.Request,
        path: str,
        fault: Fault | None,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        exchange = Exchange(request, writer, {"id": ""})
        return await serve_tokenizer(exchange, self.dialect, path, fault, self._faults, reader)

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
        bad = Exchange(request, writer, {"id": ""})
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
        problem = invalid_chat_body(body)
        if problem is not None:
            message, param = problem
            await bad.send_error(
                400, message, "invalid_request_error", "invalid_value", param=param
            )
            return True

        messages: list[dict] = body["messages"]
        requested_model = body.get("model")
        model_name = requested_model if isinstance(requested_model, str) else DEMO_MODEL_ID
        stream = body.get("stream") is True
        options = body.get("stream_options")
        include_usage = (
            stream and isinstance(options, dict) and options.get("include_usage") is True
        )
        max_tokens = body.get("max_completion_tokens")
        if max_tokens is None:
            max_tokens = body.get("max_tokens")
        model = self.latency_for(model_name)
        caching = model.prefix_cache
        count = await asyncio.to_thread(
            count_prompt,
            self.dialect,
            model_name,
            messages,
            self._prefix.shared(messages) if caching else 0,
            self._prefix.tokens if caching else None,
        )
        uncached = count.tokens - count.cached  # only these are prefilled
        self._count += 1
        entry: dict[str, Any] = {
            "id": f"{self._id_prefix}-{self._count:06d}",
            "path": request.path,
            "fault": fault.spec if fault else None,
            "server": self.dialect.name,
            "model": model_name,
            "stream": stream,
            "include_usage": include_usage,
            # llama.cpp's prompt progress, asked for (`return_progress`) where the demo plays it.
            "return_progress": stream
            and self.dialect.name == "llamacpp"
            and body.get("return_progress") is True,
            "progress_chunks": 0,
            "max_tokens": max_tokens,
            "temperature": body.get("temperature"),
            "message_count": len(messages),
            "messages": messages,
            "prompt_tokens": count.tokens,
            "cached_prompt_tokens": count.cached,
            "received_at": received_at,
            "first_byte_at": None,
            "first_token_at": None,
            "first_answer_token_at": None,
            "last_token_at": None,
            # When the schedule had the first and last token due (a body sent at once, from a
            # buffering proxy or without streaming, goes out later than its tokens were due).
            "scheduled_first_token_at": None,
            "scheduled_last_token_at": None,
            "done_at": None,
            "received_at_epoch": received_at_epoch,
            "output_tokens": 0,
            "reasoning_tokens": 0,
            # The simulated parts of the server's TTFT: rtt + queue + jitter + prefill.
            "rtt_ms": model.rtt_ms,
            "queue_ms": model.queue_ms,
            "jitter_ms": model.jitter(self._count),
            "prefill_ms": model.prefill_ms(uncached),
            "simulated_ttft_ms": model.ttft_ms(uncached, self._count),
            "preset": model.preset,
            "draft_acceptance": model.draft_acceptance,
            "status": None,
            "finish_reason": None,
            "pauses": [],
            "client_disconnected": False,
        }
        self.requests.append(entry)
        exchange = Exchange(request, writer, entry)
        kind = model_kind(model_name)
        try:
            return await answer_chat(
                exchange, model, self.dialect, kind, body, fault, self._faults, reader
            )
        except OSError:
            entry["client_disconnected"] = True
            raise
        finally:
            entry["done_at"] = time.perf_counter()
            # Only a prompt the model read stays in its cache: not one refused with an error,
            # dropped or hung, nor the context overflow that `empty` stands for.
            if entry["status"] == 200 and (fault is None or fault.kind != "empty"):
                self._prefix.remember(messages, count.pieces)
            self._append_log(entry)

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
