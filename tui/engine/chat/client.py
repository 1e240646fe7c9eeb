"""The measured chat client: a ChatRequest in, timestamped events out, one Finished at the end.

One code path for streaming on and off, over firsttoken's own HTTP client (tui/engine/http/):
nothing heavy to import before the first request, every phase of a request stamped, and no
silent retries. Retries happen here, visibly (Retrying events), and count in TTFT; so does the
one resend with an adjusted body when a model refuses a parameter (dialects.py). Each attempt
runs in client_attempt.py, which reads the body as plain dicts; what the chunks add up to (the
reply, its events, the record's figures, phases and status) is put together by
reply_assembly.py. Timing follows docs/metrics.md#definitions exactly:

- request start: `perf_counter()` just before the request is handed to the HTTP client (first
  attempt), after every client-side preparation: the body built and serialised, the client's
  one-time set-up (`prepare`) done;
- TTFB: the first SSE event of any kind (role-only chunks count), or the body without streaming;
- TTFT: the first chunk carrying content, reasoning or a tool-call delta; without streaming the
  time the body arrived (TTFT = total, `record.streamed` is False so the UI can say so);
- total: the last token-carrying chunk (the trailing usage chunk does not extend it);
- TPOT / ITL / tokens per second: `metrics.derive_timings` over the tokens `output_count` finds.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import socket
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tui import __version__
from tui.engine.chat import errors as client_errors
from tui.engine.chat.attempt import CHUNK, DONE, END, OPENED, PAUSED, STARTED, Attempt
from tui.engine.chat.context_overflow import PromptFit, prompt_fit
from tui.engine.chat.dialects import (
    ADJUSTMENTS,
    SPEAKS_LLAMACPP,
    DialectMemory,
    adjusted_body,
    adjustment_asked,
)
from tui.engine.chat.errors import ClassifiedError
from tui.engine.chat.events import ClientEvent, Finished, RequestStarted, Retrying
from tui.engine.chat.reply_assembly import Limits, Reply, finish_record, new_record
from tui.engine.chat.stream_body import BrokenBody
from tui.engine.http import (
    BadURL,
    HttpClient,
    ProxyRules,
    Request,
    StatusError,
    Target,
    join_url,
    parse_url,
    without_query,
)
from tui.engine.metrics.phases import AttemptTrace
from tui.engine.metrics.record import (
    DEFAULT_REQUEST_CLASSES,
    RequestClass,
    RequestRecord,
    RequestStatus,
    Thresholds,
)
from tui.engine.text.redact import is_secret_param, redact_text, url_secrets

if TYPE_CHECKING:
    from tui.engine.chat.request import ChatRequest
    from tui.engine.metrics.kv_cache import KvModel
    from tui.engine.tokens.counter import TokenCounter

perf_counter = time.perf_counter

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 8.0
USER_AGENT = f"firsttoken/{__version__}"


class ClientError(Exception):
    """A one-line, key-free error from list_models(); `kind` as in client_errors."""

    def __init__(self, classified: ClassifiedError) -> None:
        super().__init__(classified.message)
        self.kind = classified.kind


def server_root(base_url: str) -> str:
    """The server's root for a base_url: without its API version path (`/v1`, LM Studio's
    `/api/v0`), where servers put what is not the OpenAI API (tokenizers, health)."""
    root = without_query(base_url).rstrip("/")
    for suffix in ("/v1", "/api/v0"):
        if root.endswith(suffix):
            return root[: -len(suffix)]
    return root


def endpoint_host(base_url: str) -> str:
    """host:port, for records and messages; never the URL itself, which may hold a secret."""
    try:
        return parse_url(base_url).origin.host_port
    except BadURL:
        return "(not a usable base_url)"


def backoff_delay(retry_number: int, retry_after_s: float | None) -> float:
    """Exponential backoff with jitter; a server's Retry-After wins (capped)."""
    if retry_after_s is not None:
        return min(retry_after_s, client_errors.RETRY_AFTER_CAP_S)
    delay = min(BACKOFF_CAP_S, BACKOFF_BASE_S * (2**retry_number))
    return delay * (0.5 + random.random() / 2)


def _auth_headers(
    api_key: str | None, auth_header: str | None, target: Target | None
) -> list[tuple[str, str]]:
    if api_key:
        if auth_header:  # e.g. Azure's `api-key: KEY`
            return [(auth_header, api_key)]
        return [("Authorization", f"Bearer {api_key}")]
    if target is not None and target.username is not None:  # http://user:pass@host/v1
        pair = f"{target.username}:{target.password or ''}".encode()
        return [("Authorization", "Basic " + base64.b64encode(pair).decode("ascii"))]
    return []


def best_prompt_count(record: RequestRecord) -> int | None:
    """The prompt's size as counted best: the server's (in its reply or by its tokenizer),
    else the local estimate."""
    server = record.server or {}
    for count in (
        server.get("prompt_tokens"),
        record.prompt_tokens_usage,
        record.prompt_tokens_server,
        record.prompt_tokens_estimated,
    ):
        if isinstance(count, int):
            return count
    return None


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def sent_credentials(headers: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """The secrets in request headers, as sent and decoded: an Authorization header's token
    (for Basic, its base64 and the user:password it encodes), and the value of any header whose
    name says it carries a key or token."""
    found: list[str] = []
    for name, value in headers:
        lowered = name.lower()
        if lowered not in ("authorization", "proxy-authorization") and not is_secret_param(lowered):
            continue
        scheme, _, token = value.partition(" ")
        if not token:
            found.append(value)
            continue
        found.append(token)
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(token, validate=True).decode("utf-8")
            except ValueError:
                continue
            user, _, password = pair.partition(":")
            found.extend((pair, password) if password else (pair, user))
            found.append(base64.urlsafe_b64encode(pair.encode()).decode("ascii"))
    return tuple(secret for secret in found if len(secret) >= 4)


def attempt_notices(attempt: Attempt) -> list[str]:
    """What the answering attempt worked around, one line each (the record's `notices`)."""
    notices = []
    if attempt.replaced:
        notices.append(
            f"{attempt.replaced:,} chunk(s) held bytes that are not UTF-8: shown as U+FFFD, "
            "the reply read on"
        )
    if attempt.hold_backs:
        notices.append(
            "the reply came faster than it could be shown: reading paused "
            f"{attempt.hold_backs:,} time(s), so later token times are when they were read"
        )
    return notices


def _shown_endpoint(base_url: str) -> str:
    """The base URL without user info or query: what a message or a file may hold."""
    try:
        target = parse_url(base_url)
    except BadURL:
        return without_query(base_url)
    origin = target.origin
    path = without_query(target.path_and_query).rstrip("/")
    return f"{origin.scheme}://{origin.host_header}{path}"


def _merged(
    defaults: list[tuple[str, str]], extra: Mapping[str, str]
) -> tuple[tuple[str, str], ...]:
    """The default headers with `extra` added; an extra header replaces a default of its name."""
    replaced = {name.lower() for name in extra}
    kept = [(name, value) for name, value in defaults if name.lower() not in replaced]
    return tuple(kept + list(extra.items()))


class ChatClient:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        timeout_s: float,
        chunk_timeout_ms: float,
        thresholds: Thresholds | None = None,
        request_classes: Sequence[RequestClass] = DEFAULT_REQUEST_CLASSES,
        max_retries: int = 2,
        simulated: bool = False,
        counter: TokenCounter | None = None,
        extra_headers: Mapping[str, str] | None = None,
        extra_query: Mapping[str, str] | None = None,
        auth_header: str | None = None,
        proxies: ProxyRules | None = None,
        dialects: DialectMemory | None = None,
        stall_timeout_ms: float | None = None,
        stall_setting: str | None = None,
        prompt_progress: bool = False,
        kv_models: Callable[[str], KvModel | None] | None = None,
        context_window: int | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        # What no message may show: the key, and the URL's own credentials and secret params.
        self._secrets: tuple[str, ...] = tuple(
            secret for secret in (api_key, *url_secrets(base_url)) if secret and len(secret) >= 4
        )
        self.timeout_s = float(timeout_s)
        self.chunk_timeout_ms = float(chunk_timeout_ms)
        # A gap over chunk_timeout_ms is a pause (reported, the reply goes on); a gap over
        # stall_timeout_ms ends it as stalled, its message naming `stall_setting` (where the
        # limit is set). None: the chunk timeout ends the stream.
        self.stall_timeout_ms = None
        if stall_timeout_ms is not None:
            self.stall_timeout_ms = max(float(stall_timeout_ms), self.chunk_timeout_ms)
        self.stall_setting = stall_setting
        self.thresholds = thresholds or Thresholds()
        # Ask a streamed request for the server's prompt progress (llama.cpp's
        # `return_progress`); a server that refuses the field gets it no more (dialects.py).
        self.prompt_progress = prompt_progress
        # A model's KV-cache shape (kv_cache.py), for the prompt's and the context's KV bytes;
        # the context window: the configured one, else what the server's model list states.
        self.kv_models = kv_models
        self.context_window = context_window
        self.context_windows: dict[str, int] = {}
        self.request_classes = tuple(request_classes)
        self.max_retries = max(0, int(max_retries))
        self.simulated = simulated
        self.counter = counter
        self.host = endpoint_host(self.base_url)
        self.dialects = dialects if dialects is not None else DialectMemory()
        # The endpoint as messages name it and dialects are remembered for it: no credentials
        # from the URL, no query (it may hold a key).
        self.endpoint = _shown_endpoint(self.base_url)
        self._http = HttpClient(proxies)
        self._url_problem: str | None = None
        self._chat_target: Target | None = None
        self._models_target: Target | None = None
        try:
            self._chat_target = parse_url(join_url(self.base_url, "chat/completions", extra_query))
            self._models_target = parse_url(join_url(self.base_url, "models", extra_query))
        except BadURL as problem:
            self._url_problem = str(problem)
        common = [
            ("User-Agent", USER_AGENT),
            ("Accept-Encoding", "identity"),
            *_auth_headers(api_key, auth_header, self._chat_target),
        ]
        extra = dict(extra_headers or {})
        self._stream_headers = _merged(
            [*common, ("Accept", "text/event-stream"), ("Content-Type", "application/json")],
            extra,
        )
        self._whole_headers = _merged(
            [*common, ("Accept", "application/json"), ("Content-Type", "application/json")],
            extra,
        )
        self._models_headers = _merged([*common, ("Accept", "application/json")], extra)
        # Every credential the client itself sends, in each form it sends it, is masked in
        # whatever a server echoes back (an error body quoting the request's headers).
        sent = sent_credentials(self._stream_headers)
        self._secrets = tuple(dict.fromkeys((*self._secrets, *sent)))
        self._prepared_on: asyncio.AbstractEventLoop | None = None

    async def aclose(self) -> None:
        await self._http.aclose()

    async def prepare(self) -> None:
        """What the first request would otherwise pay inside its measured time, done once per
        event loop: the TLS trust store loaded (https), the resolver's worker thread started
        (a host name), JSON's first use. Nothing is sent."""
        loop = asyncio.get_running_loop()
        if self._prepared_on is loop:
            return
        self._prepared_on = loop
        json.loads(json.dumps({"warm": [1.5, None]}))
        target = self._chat_target
        if target is None:
            return
        if target.origin.scheme == "https":
            self._http.tls()
        proxy = self._http.proxies.proxy_for(target.origin)
        hop = proxy.origin if proxy is not None else target.origin
        if not hop.is_ip_literal:
            # The first lookup starts the loop's executor thread: start it now, on a name that
            # needs no network.
            await loop.run_in_executor(None, socket.getaddrinfo, "localhost", None)

    async def list_models(self) -> list[str]:
        url = join_url(self.endpoint, "models")
        try:
            return await asyncio.wait_for(self._list_models(), self.timeout_s)
        except asyncio.TimeoutError:
            raise ClientError(client_errors.timeout_error(url, self.timeout_s)) from None
        except Exception as error:  # one line, never a traceback
            raise ClientError(self._classify(error, "models")) from None

    async def _list_models(self) -> list[str]:
        if self._models_target is None:
            raise ValueError(f"base_url {self._url_problem}")
        request = Request("GET", self._models_target, self._models_headers)
        body = await self._whole_body(request)
        page = json.loads(body)
        data = page.get("data") if isinstance(page, dict) else None
        if not isinstance(data, list):
            raise json.JSONDecodeError("no model list", body.decode(errors="replace"), 0)
        ids = []
        for item in data:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                continue
            ids.append(item["id"])
            meta = item.get("meta")  # llama-server: the context it was started with
            window = meta.get("n_ctx") if isinstance(meta, dict) else None
            if isinstance(window, int) and not isinstance(window, bool) and 0 < window < 1 << 31:
                self.context_windows[item["id"]] = window
        return ids

    def kv_model(self, model: str) -> KvModel | None:
        return self.kv_models(model) if self.kv_models is not None else None

    def context_for(self, model: str) -> int | None:
        """The context window the KV figures size: the configured one, else the server's."""
        if self.context_window is not None:
            return self.context_window
        if model in self.context_windows:
            return self.context_windows[model]
        # A server that states one window for every model it lists (llama-server, the demo)
        # runs any name it is asked for with it.
        windows = set(self.context_windows.values())
        return windows.pop() if len(windows) == 1 else None

    async def _whole_body(self, request: Request) -> bytes:
        """A small request's whole answer; StatusError (with the start of its body) for a
        status of 300 or more."""
        exchange = await self._http.open(request, [])
        try:
            if exchange.status >= 300:
                text, _ = await exchange.read(64 * 1024)
                head = exchange.head
                raise StatusError(
                    head.status, head.reason, head.headers, text.decode("utf-8", "replace")
                )
            body, _ = await exchange.read()
        finally:
            exchange.close()
        return body

    async def post_json(self, path_from_root: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST `payload` as JSON to a path at the server's root and return the JSON object it
        answers: for what servers offer beside the API, such as their tokenizers (llama.cpp's
        `/tokenize`, vLLM's `/tokenize`, llama-cpp-python's `/extras/tokenize/count`), which
        live at the root, not under the API's `/v1`.

        Sent over the client's own connection pool with its key and headers, within
        `timeout_seconds`. Any failure raises ClientError with a one-line, key-free message;
        its `kind` is `not_found` for a 404 (no such endpoint), `bad_request` for another 4xx,
        else as for a chat request (`connection`, `timeout`, `server`, `bad_json`...)."""
        url = join_url(server_root(self.base_url), path_from_root.lstrip("/"))
        shown = join_url(server_root(self.endpoint), path_from_root.lstrip("/"))
        try:
            return await asyncio.wait_for(self._post_json(url, payload), self.timeout_s)
        except asyncio.TimeoutError:
            raise ClientError(client_errors.timeout_error(shown, self.timeout_s)) from None
        except StatusError as error:
            kind = "not_found" if error.status == 404 else "bad_request"
            if error.status >= 500:
                kind = "server"
            text = _shortened(redact_text(" ".join(error.text.split()), self._secrets), 160)
            raise ClientError(
                ClassifiedError(kind, f"HTTP {error.status} from {shown}: {text}")
            ) from None
        except json.JSONDecodeError:
            raise ClientError(client_errors.bad_json_error(shown)) from None
        except Exception as error:  # one line, never a traceback
            classified = client_errors.classify(error, shown, self._api_key, secrets=self._secrets)
            raise ClientError(self._scrub(classified)) from None

    async def _post_json(self, url: str, payload: dict[str, Any]) -> dict[str, Any]:
        target = parse_url(url)
        request = Request("POST", target, self._whole_headers, json.dumps(payload).encode())
        body = await self._whole_body(request)
        answer = json.loads(body)
        if not isinstance(answer, dict):
            raise json.JSONDecodeError("not a JSON object", body.decode(errors="replace"), 0)
        return answer

    # -- the request ------------------------------------------------------------------------

    def _classify(
        self, error: BaseException, path: str = "chat/completions", fit: PromptFit | None = None
    ) -> ClassifiedError:
        url = join_url(self.endpoint, path)
        classified = client_errors.classify(
            error, url, self._api_key, fit=fit, secrets=self._secrets
        )
        return self._scrub(classified)

    def _scrub(self, classified: ClassifiedError) -> ClassifiedError:
        """The message without the key or the URL's credentials (a server may echo them)."""
        message = redact_text(classified.message, self._secrets)
        if message == classified.message:
            return classified
        return ClassifiedError(
            classified.kind, message, classified.retryable, classified.retry_after_s
        )

    def _http_request(self, request: ChatRequest, adjustments: Sequence[str]) -> Request:
        """The request as it goes on the wire: body built and serialised here, before the clock."""
        assert self._chat_target is not None
        body = request.body()
        if (self.prompt_progress or SPEAKS_LLAMACPP in adjustments) and request.stream:
            body["return_progress"] = True
        if adjustments:
            body = adjusted_body(body, adjustments)
        headers = self._stream_headers if request.stream else self._whole_headers
        return Request("POST", self._chat_target, headers, json.dumps(body).encode())

    async def stream(
        self, request: ChatRequest, cancel: asyncio.Event | None = None
    ) -> AsyncIterator[ClientEvent]:
        """Events for one request; always ends with exactly one Finished (see events.py)."""
        record = new_record(
            request,
            endpoint_host=self.host,
            simulated=self.simulated,
            request_classes=self.request_classes,
        )
        reply = Reply()
        queue: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        attempt: Attempt | None = None
        cancel_waiter: asyncio.Task[Any] | None = None
        started_at: float | None = None
        outcome = "eof"
        failure: ClassifiedError | None = None
        adjustments = list(self.dialects.get(self.endpoint, request.model))
        fit = prompt_fit(request)  # what a context overflow's message may say of the prompt
        broke_off = False  # the response head arrived, then the connection closed mid-body

        def on_cancel(_: object) -> None:
            if attempt is not None:
                attempt.abort("cancelled")

        try:
            if cancel is not None:
                if cancel.is_set():
                    record.status = RequestStatus.CANCELLED
                    yield Finished(perf_counter(), record, "")
                    return
                cancel_waiter = asyncio.ensure_future(cancel.wait())
                cancel_waiter.add_done_callback(on_cancel)
            if self._url_problem is not None:
                failure = ClassifiedError(
                    "connection", f"base_url {self._url_problem}: check base_url"
                )
                record.status = RequestStatus.ERROR
                record.error_kind, record.error_message = failure.kind, failure.message
                yield Finished(perf_counter(), record, "")
                return
            await self.prepare()

            attempt_number = 0
            backoff_retries = 0
            while True:
                http_request = self._http_request(request, adjustments)
                attempt = Attempt(
                    self._http,
                    http_request,
                    streaming=request.stream,
                    timeout_s=self.timeout_s,
                    chunk_timeout_s=self.chunk_timeout_ms / 1000.0,
                    stall_timeout_s=(
                        None if self.stall_timeout_ms is None else self.stall_timeout_ms / 1000.0
                    ),
                    queue=queue,
                )
                attempt.start()
                if cancel is not None and cancel.is_set():
                    attempt.abort("cancelled")
                outcome, error = "eof", None
                opened = broke_off = False
                while True:
                    item = await queue.get()
                    if attempt.held_back:
                        attempt.catch_up()
                    tag = item[0]
                    if tag == CHUNK:
                        for event in reply.on_chunk(item[1], item[2], request.stream):
                            yield event
                    elif tag == STARTED:
                        if started_at is None:
                            started_at = item[1]
                        yield RequestStarted(item[1], attempt_number)
                    elif tag == END:
                        outcome, error = item[1], item[2]
                        break
                    elif tag == OPENED:
                        opened = True  # headers only; TTFB waits for the first SSE event
                    elif tag == DONE:
                        reply.done = True
                    elif tag == PAUSED:
                        yield reply.on_pause(item[1], item[2])
                await attempt.wait_closed()

                failure = None
                if outcome == "error" and error is not None:
                    failure = self._classify(error, fit=fit)
                    if opened and failure.kind in ("connection", "dns", "bad_body"):
                        # The stream was open and broke off (e.g. an incomplete chunked body, or
                        # llama.cpp's empty answer to an over-long prompt): an early end, not a
                        # failed connection, and not worth retrying.
                        outcome, failure, broke_off = "eof", None, True
                        if isinstance(error, BrokenBody):
                            reply.broken_by = error.detail
                asked = (
                    adjustment_asked(error.status, error.body, adjustments)
                    if isinstance(error, StatusError)
                    else None
                )
                if asked is not None and failure is not None:
                    # The model refuses a parameter: send again at once with the body it takes,
                    # and remember that for this endpoint and model.
                    adjustments.append(asked)
                    self.dialects.learn(self.endpoint, request.model, asked)
                    record.retries += 1
                    attempt_number += 1
                    yield Retrying(
                        perf_counter(), attempt_number, 0.0, f"{failure.message}: sending again"
                    )
                    queue = asyncio.Queue()
                    continue
                retry = (
                    failure is not None
                    and failure.retryable
                    and not opened
                    and backoff_retries < self.max_retries
                )
                if not retry or failure is None:
                    break
                delay = backoff_delay(backoff_retries, failure.retry_after_s)
                backoff_retries += 1
                attempt_number += 1
                record.retries += 1
                yield Retrying(perf_counter(), attempt_number, delay, failure.message)
                if cancel_waiter is not None:
                    await asyncio.wait((cancel_waiter,), timeout=delay)
                    if cancel is not None and cancel.is_set():
                        outcome = "cancelled"
                        break
                else:
                    await asyncio.sleep(delay)
                queue = asyncio.Queue()

            finished_at = perf_counter()
            record.adjustments = [name for name in adjustments if name in ADJUSTMENTS]
            if attempt is not None:
                record.notices = attempt_notices(attempt)
            trace = None
            if attempt is not None and attempt.started_at is not None:
                trace = AttemptTrace(attempt.started_at, tuple(attempt.stamps), attempt.reused)
            finish_record(
                record,
                reply,
                request,
                started_at=started_at,
                outcome=outcome,
                failure=failure,
                broke_off=broke_off,
                limits=Limits(
                    join_url(self.endpoint, "chat/completions"),
                    self.timeout_s,
                    self.chunk_timeout_ms,
                    self.stall_timeout_ms,
                    self.stall_setting,
                ),
                thresholds=self.thresholds,
                counter=self.counter,
                scrub=self._scrub,
                trace=trace,
                finished_at=finished_at,
            )
            kv = self.kv_model(request.model)
            if kv is not None:
                record.kv_cache = kv.figures(
                    best_prompt_count(record), self.context_for(request.model)
                )
            if record.server is not None and "timings" in record.server["source"]:
                self.dialects.learn(self.endpoint, request.model, SPEAKS_LLAMACPP)
            yield Finished(finished_at, record, reply.text, reply.reasoning)
        finally:
            if cancel_waiter is not None:
                cancel_waiter.remove_done_callback(on_cancel)
                cancel_waiter.cancel()
            if attempt is not None:
                await attempt.wait_closed()
