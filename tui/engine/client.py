"""The measured chat client: a ChatRequest in, timestamped events out, one Finished at the end.

One code path for streaming on and off, over `openai.AsyncOpenAI(max_retries=0)`: the SDK's own
silent retries would hide time, so retries happen here, visibly (Retrying events), and count in
TTFT. The SDK builds and sends the request and raises status errors; the body is read by
client_attempt.py as plain dicts (a pydantic chunk per event was most of the client's CPU), and
what the chunks add up to (the reply, its events, the record's figures and status) is put
together by reply_assembly.py. Timing follows DESIGN.md exactly:

- request start: `perf_counter()` just before the request is handed to the SDK (first attempt);
- TTFB: the first SSE event of any kind (role-only chunks count), or the body without streaming;
- TTFT: the first chunk carrying content, reasoning or a tool-call delta; without streaming the
  time the body arrived (TTFT = total, `record.streamed` is False so the UI can say so);
- total: the last token-carrying chunk (the trailing usage chunk does not extend it);
- TPOT / ITL / tokens per second: `metrics.derive_timings`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

import openai

from tui.engine import client_errors
from tui.engine.asyncio_network import http_client_on_asyncio
from tui.engine.base_url import split_base_url
from tui.engine.client_attempt import CHUNK, DONE, END, OPENED, PAUSED, STARTED, Attempt
from tui.engine.client_body import BrokenBody
from tui.engine.client_errors import ClassifiedError
from tui.engine.events import ClientEvent, Finished, RequestStarted, Retrying
from tui.engine.metrics import DEFAULT_REQUEST_CLASSES, RequestClass, RequestStatus, Thresholds
from tui.engine.redact import mask_url, redact_text, url_secrets
from tui.engine.reply_assembly import Limits, Reply, finish_record, new_record

if TYPE_CHECKING:
    from tui.engine.tokens import TokenCounter
    from tui.engine.trim import TrimResult

perf_counter = time.perf_counter

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 8.0


@dataclass(frozen=True)
class ChatRequest:
    messages: list[dict[str, Any]]
    model: str
    stream: bool
    temperature: float
    max_tokens: int
    trim: TrimResult | None = None
    prompt_tokens_estimated: int | None = None  # calibrated when the counter has a ratio
    prompt_tokens_exact: bool = False
    # The raw (uncalibrated) count: what calibration compares with usage.prompt_tokens.
    prompt_tokens_counted: int | None = None
    # max_tokens was asked for this request (a flag, `check`), not the config's default: the
    # request class follows it (request_classes.py).
    max_tokens_asked: bool = False
    # Where the prompt's count came from: "estimate" (local), "server_text" (the server's
    # tokenizer per message: server_tokens.py); None when nothing counted it.
    prompt_tokens_source: str | None = None

    def body(self) -> dict[str, Any]:
        """The request body as the article sends it."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": self.messages,
            "stream": self.stream,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        return body


class ClientError(Exception):
    """A one-line, key-free error from list_models(); `kind` as in client_errors."""

    def __init__(self, classified: ClassifiedError) -> None:
        super().__init__(classified.message)
        self.kind = classified.kind


def server_root(base_url: str) -> str:
    """The server's root for a base_url: without its API version path (`/v1`, LM Studio's
    `/api/v0`), where servers put what is not the OpenAI API (tokenizers, health)."""
    root = base_url.rstrip("/")
    for suffix in ("/v1", "/api/v0"):
        if root.endswith(suffix):
            return root[: -len(suffix)]
    return root


def endpoint_host(base_url: str) -> str:
    try:
        hostname = urlsplit(base_url).hostname
    except ValueError:
        hostname = None
    return client_errors.host_port(base_url) if hostname else mask_url(base_url)


def backoff_delay(retry_number: int, retry_after_s: float | None) -> float:
    """Exponential backoff with jitter; a server's Retry-After wins (capped)."""
    if retry_after_s is not None:
        return min(retry_after_s, client_errors.RETRY_AFTER_CAP_S)
    delay = min(BACKOFF_CAP_S, BACKOFF_BASE_S * (2**retry_number))
    return delay * (0.5 + random.random() / 2)


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
        stall_timeout_ms: float | None = None,
        stall_setting: str | None = None,
    ) -> None:
        # The query (a key or an API version some gateways take there) goes with every request
        # as the SDK's default_query: joined onto the whole string, paths would land after it.
        self.base_url, query = split_base_url(base_url)
        # How a message names the URL asked: with the query, masked there (client_errors).
        self._query = "?" + urlencode(query) if query else ""
        self._api_key = api_key
        self._secrets = tuple(
            secret for secret in (api_key, *url_secrets(base_url)) if secret and len(secret) >= 4
        )
        self.timeout_s = float(timeout_s)
        self.chunk_timeout_ms = float(chunk_timeout_ms)
        # A gap over chunk_timeout_ms is a pause (reported, the reply goes on); a gap over
        # stall_timeout_ms ends it as stalled, its message naming `stall_setting` (where the
        # limit is set). None: the chunk timeout ends the stream, as before there was a limit.
        self.stall_timeout_ms = None
        if stall_timeout_ms is not None:
            self.stall_timeout_ms = max(float(stall_timeout_ms), self.chunk_timeout_ms)
        self.stall_setting = stall_setting
        self.thresholds = thresholds or Thresholds()
        self.request_classes = tuple(request_classes)
        self.max_retries = max(0, int(max_retries))
        self.simulated = simulated
        self.counter = counter
        self.host = endpoint_host(self.base_url)
        # Our own watchdog enforces timeout_seconds before the first token and chunk_timeout_ms
        # after it; the SDK's timeout is only a backstop for a watchdog that could not fire.
        backstop = max(self.timeout_s, self._stall_ms / 1000.0) + 5.0
        self._http = http_client_on_asyncio()
        self._sdk = openai.AsyncOpenAI(
            base_url=self.base_url,
            # The SDK refuses to start without a key; local servers accept any.
            api_key=api_key or "no-key",
            default_query=query or None,
            max_retries=0,
            timeout=openai.Timeout(backstop, connect=self.timeout_s),
            http_client=self._http,
        )

    @property
    def _stall_ms(self) -> float:
        return self.chunk_timeout_ms if self.stall_timeout_ms is None else self.stall_timeout_ms

    async def aclose(self) -> None:
        await self._sdk.close()

    async def list_models(self) -> list[str]:
        try:
            page = await asyncio.wait_for(self._sdk.models.list(), self.timeout_s)
        except asyncio.TimeoutError:
            raise ClientError(
                client_errors.timeout_error(self.base_url + "/models", self.timeout_s)
            ) from None
        except Exception as error:  # one line, never a traceback
            raise ClientError(self._classify(error, "/models")) from None
        return [model.id for model in page.data]

    async def post_json(self, path_from_root: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST `payload` as JSON to a path at the server's root and return the JSON object it
        answers: for what servers offer beside the API, such as their tokenizers (llama.cpp's
        `/tokenize`, vLLM's `/tokenize`, llama-cpp-python's `/extras/tokenize/count`), which
        live at the root, not under the API's `/v1`.

        The one request of the client that is not a chat completion: sent over the client's
        own connection pool (httpx over the asyncio network backend, as the SDK sends chat
        requests), with its key, within `timeout_seconds`. Any failure raises ClientError with
        a one-line, key-free message; its `kind` is `not_found` for a 404 (no such endpoint),
        `bad_request` for another 4xx, else as for a chat request (`connection`, `timeout`,
        `server`, `bad_json`...)."""
        import httpx2

        url = server_root(self.base_url) + "/" + path_from_root.lstrip("/")
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        try:
            response = await asyncio.wait_for(
                self._http.post(url, json=payload, headers=headers), self.timeout_s
            )
        except asyncio.TimeoutError:
            raise ClientError(client_errors.timeout_error(url, self.timeout_s)) from None
        except httpx2.HTTPError as error:  # as the SDK reports a connection that failed
            wrapped = openai.APIConnectionError(request=httpx2.Request("POST", url))
            wrapped.__cause__ = error
            classified = self._scrub(client_errors.classify(wrapped, url, self._api_key))
            raise ClientError(classified) from None
        status = response.status_code
        if status >= 300:
            kind = "not_found" if status == 404 else "bad_request" if status < 500 else "server"
            text = redact_text(" ".join(response.text.split())[:160], self._secrets)
            raise ClientError(ClassifiedError(kind, f"HTTP {status} from {mask_url(url)}: {text}"))
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise ClientError(client_errors.bad_json_error(url))
        return answer

    # -- the request ------------------------------------------------------------------------

    def _classify(
        self,
        error: BaseException,
        path: str = "/chat/completions",
        trimmed_to: int | None = None,
    ) -> ClassifiedError:
        classified = client_errors.classify(
            error, self.base_url + path + self._query, self._api_key, trimmed_to=trimmed_to
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
        body = request.body()
        trimmed_to = request.trim.budget if request.trim is not None else None
        broke_off = False  # the response head arrived, then the connection closed mid-body
        # The raw response, body unread: the SDK still builds the URL and headers, applies the
        # timeouts and raises APIStatusError for 4xx/5xx before returning it.
        raw_create = self._sdk.chat.completions.with_streaming_response.create

        def open_response() -> Awaitable[Any]:
            # The context manager's __aenter__ sends the request; its __aexit__ would only close
            # the response, which the attempt does itself in every case.
            return raw_create(**body).__aenter__()

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

            for attempt_number in range(self.max_retries + 1):
                attempt = Attempt(
                    open_response,
                    streaming=request.stream,
                    timeout_s=self.timeout_s,
                    chunk_timeout_s=self.chunk_timeout_ms / 1000.0,
                    queue=queue,
                    stall_timeout_s=(
                        None if self.stall_timeout_ms is None else self.stall_timeout_ms / 1000.0
                    ),
                )
                attempt.start()
                if cancel is not None and cancel.is_set():
                    attempt.abort("cancelled")
                outcome, error = "eof", None
                opened = broke_off = False
                while True:
                    item = await queue.get()
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
                    failure = self._classify(error, trimmed_to=trimmed_to)
                    if opened and failure.kind in ("connection", "dns"):
                        # The stream was open and broke off (e.g. an incomplete chunked body, or
                        # llama.cpp's empty answer to an over-long prompt): an early end, not a
                        # failed connection, and not worth retrying.
                        outcome, failure, broke_off = "eof", None, True
                        if isinstance(error, BrokenBody):
                            reply.broken_by = error.message
                retry = (
                    failure is not None
                    and failure.retryable
                    and not opened
                    and attempt_number < self.max_retries
                )
                if not retry or failure is None:
                    break
                delay = backoff_delay(attempt_number, failure.retry_after_s)
                record.retries += 1
                yield Retrying(perf_counter(), attempt_number + 1, delay, failure.message)
                if cancel_waiter is not None:
                    await asyncio.wait((cancel_waiter,), timeout=delay)
                    if cancel is not None and cancel.is_set():
                        outcome = "cancelled"
                        break
                else:
                    await asyncio.sleep(delay)
                queue = asyncio.Queue()

            finished_at = perf_counter()
            finish_record(
                record,
                reply,
                request,
                started_at=started_at,
                outcome=outcome,
                failure=failure,
                broke_off=broke_off,
                limits=Limits(
                    self.base_url + "/chat/completions",
                    self.timeout_s,
                    self.chunk_timeout_ms,
                    self.stall_timeout_ms,
                    self.stall_setting,
                ),
                thresholds=self.thresholds,
                counter=self.counter,
                scrub=self._scrub,
                finished_at=finished_at,
            )
            yield Finished(finished_at, record, reply.text, reply.reasoning)
        finally:
            if cancel_waiter is not None:
                cancel_waiter.remove_done_callback(on_cancel)
                cancel_waiter.cancel()
            if attempt is not None:
                await attempt.wait_closed()
