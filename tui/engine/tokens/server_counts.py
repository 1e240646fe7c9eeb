"""Exact prompt counts from the server's own tokenizer, where it has one.

A local count (tiktoken's cl100k for most open models) can be 40 % off a small model's own
tokenizer, and it cannot see the chat template. Servers that run the model expose their
tokenizer beside the API, at the server's root:

- llama.cpp's `llama-server`: `POST /apply-template {"messages"}` -> `{"prompt"}` (the template
  rendered), then `POST /tokenize {"content", "add_special": false, "parse_special": true}`
  -> `{"tokens"}`: the exact count of a chat request's prompt;
- vLLM: `POST /tokenize {"model", "messages", "add_generation_prompt": true}` -> `{"count"}`
  (exact), or `{"model", "prompt", "add_special_tokens": false}` for a text;
- llama-cpp-python: `POST /extras/tokenize/count {"input"}` -> `{"count"}`: a text's count (with
  its BOS); it has no template endpoint, so a prompt's count is its messages' texts counted by
  the server plus the chat template's few tokens per message from the local recipe.

Which of these an endpoint + model answers is probed once (a few tiny requests, never before a
request is sent for the first time) and remembered across runs in the state dir
(`server_tokenizers.json`), with the template's cost measured at the same time: per message
(`framing`) and per prompt (`priming`, its start and the reply's opening). Everything here is
async and goes through `ChatClient.post_json`, so the app calls it from its network loop.

Counts, for the trimmer and the budget gauge (`ServerCounts`, a drop-in for the local counter's
prompt counting): a message's exact count is its text counted by the server, cached by content,
plus the measured framing; a prompt's total (`count_prompt`) is the server's own count of the
templated prompt where the server can template (llama.cpp, vLLM), its source "server".
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tui.engine.tokens.calibration import Calibration, CalibrationFile
from tui.engine.tokens.counter import (
    REPLY_PRIMING,
    TOKENS_PER_MESSAGE,
    MessageKey,
    TokenCounter,
    message_key,
)

LLAMACPP = "llamacpp"
VLLM = "vllm"
LLAMA_CPP_PYTHON = "llama-cpp-python"
NONE = "none"
APIS = (LLAMACPP, VLLM, LLAMA_CPP_PYTHON)
# The source of a count, as records say it.
SERVER = "server"  # the server counted the templated prompt: exact
SERVER_TEXT = "server_text"  # the server counted the texts; the template's tokens are local
ESTIMATE = "estimate"  # the local count
# The servers that count the templated prompt itself: their totals are exact.
TEMPLATED = (LLAMACPP, VLLM)
# Usage within 1 % of a count (or a token or two of a short prompt) agrees with it.
AGREEMENT = 0.01

# Requests at once while counting many messages (a local server has a few HTTP threads).
CONCURRENCY = 4
# A probe's conversation: the template's cost is what its count has beyond the texts'.
_PROBE_ONE = [{"role": "user", "content": "hello"}]
_PROBE_THREE = [
    {"role": "user", "content": "hello"},
    {"role": "assistant", "content": "hi there"},
    {"role": "user", "content": "how are you"},
]

PostJson = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


class ProbeFailed(Exception):
    """The endpoint could not be asked (connection, timeout): try again another time."""


@dataclass(frozen=True)
class TokenizerApi:
    """What an endpoint + model answers, and its template's cost in tokens."""

    api: str  # one of APIS, or NONE
    framing: int = TOKENS_PER_MESSAGE + 1  # per message, beyond its text
    priming: int = REPLY_PRIMING  # per prompt: its start and the reply's opening
    text_overhead: int = 0  # what counting any text adds (llama-cpp-python's BOS)
    checked_at_epoch: float = 0.0


class ProbeMemory:
    """The probes' results, per endpoint + model, in a JSON file in the state dir (the owner's
    alone). Keys are a hash of the base URL and model: no URL or key is written."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from tui.locations import server_tokenizers_path

            path = server_tokenizers_path()
        self.path = path
        self._lock = threading.Lock()

    @staticmethod
    def key(base_url: str, model: str) -> str:
        return hashlib.sha256(f"{base_url}\n{model}".encode()).hexdigest()[:24]

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, base_url: str, model: str) -> TokenizerApi | None:
        found = self._read().get(self.key(base_url, model))
        if not isinstance(found, dict) or found.get("api") not in (*APIS, NONE):
            return None
        try:
            return TokenizerApi(
                api=found["api"],
                framing=int(found.get("framing", TOKENS_PER_MESSAGE + 1)),
                priming=int(found.get("priming", REPLY_PRIMING)),
                text_overhead=int(found.get("text_overhead", 0)),
                checked_at_epoch=float(found.get("checked_at_epoch", 0.0)),
            )
        except (TypeError, ValueError):
            return None

    def put(self, base_url: str, model: str, found: TokenizerApi) -> None:
        """Remember a probe's result; a file that cannot be written is left as it is (the
        probe runs again next time)."""
        from tui.locations import write_atomically

        with self._lock:
            data = self._read()
            data[self.key(base_url, model)] = asdict(found)
            with contextlib.suppress(OSError):  # the probe runs again next time
                write_atomically(self.path, json.dumps(data, indent=1, sort_keys=True))


def _message_text(message: Mapping[str, Any]) -> str | None:
    """The text a message's tokens are mostly made of: its content, its tool calls' names and
    arguments. None for a message with parts other than text (an image): not counted here."""
    content = message.get("content")
    if content is None or isinstance(content, str):
        text = content or ""
    elif isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, Mapping) or part.get("type") != "text":
                return None
            texts.append(str(part.get("text") or ""))
        text = "\n".join(texts)
    else:
        return None
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping):
                text += f"{function.get('name') or ''}{function.get('arguments') or ''}"
    return text


def _count_of(answer: dict[str, Any]) -> int:
    count = answer.get("count")
    if isinstance(count, int) and not isinstance(count, bool):
        return count
    tokens = answer.get("tokens")
    if isinstance(tokens, list):
        return len(tokens)
    raise ValueError("no count in the answer")


class ServerTokenizer:
    """The server's tokenizer for one endpoint + model (see the module docstring)."""

    def __init__(
        self,
        post_json: PostJson,
        base_url: str,
        model: str,
        memory: ProbeMemory | None = None,
        not_found: type[Exception] | None = None,
    ) -> None:
        # post_json(path_from_root, payload) -> the JSON object answered; raises on failure.
        # `not_found`: the exception class meaning "no such endpoint" (any other failure
        # leaves the probe undecided); by default anything but a connection problem.
        self._post = post_json
        self.base_url = base_url
        self.model = model
        self.memory = memory if memory is not None else ProbeMemory()
        self._found: TokenizerApi | None = self.memory.get(base_url, model)
        self._probing: asyncio.Future[TokenizerApi] | None = None
        self._texts: dict[str, int] = {}  # text's hash -> the server's count of it

    @property
    def known(self) -> TokenizerApi | None:
        """What an earlier probe found (this run or a saved one), without asking."""
        return self._found

    async def api(self) -> TokenizerApi:
        """What the endpoint answers: probed once, then remembered (ProbeFailed when the
        endpoint could not be reached: nothing is remembered then)."""
        if self._found is not None:
            return self._found
        if self._probing is None:
            self._probing = asyncio.ensure_future(self._probe())
        try:
            return await asyncio.shield(self._probing)
        except ProbeFailed:
            self._probing = None
            raise

    async def _ask(self, path: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The answer, or None when the endpoint says it has no such thing (404, 400, 422...)."""
        try:
            return await self._post(path, payload)
        except Exception as error:  # what counts as "not there" vs "not reachable"
            kind = getattr(error, "kind", None)
            if kind in ("connection", "dns", "timeout", "server"):
                raise ProbeFailed(str(error)) from None
            return None

    async def _probe(self) -> TokenizerApi:
        found = await self._probe_llamacpp() or await self._probe_vllm()
        found = found or await self._probe_llama_cpp_python() or TokenizerApi(NONE)
        found = TokenizerApi(
            found.api, found.framing, found.priming, found.text_overhead, time.time()
        )
        self._found = found
        self.memory.put(self.base_url, self.model, found)
        return found

    async def _template_cost(self, api: str) -> TokenizerApi | None:
        """The template's cost from two probe conversations (llama.cpp, vLLM)."""
        one = await self._templated(api, _PROBE_ONE)
        three = await self._templated(api, _PROBE_THREE)
        texts = [await self._text(api, m["content"], 0) for m in _PROBE_THREE]
        if one is None or three is None or None in texts:
            return None
        a, b, c = (t for t in texts if t is not None)
        framing = max(0, round((three - one - b - c) / 2))
        priming = max(0, one - a - framing)
        return TokenizerApi(api, framing, priming, 0)

    async def _probe_llamacpp(self) -> TokenizerApi | None:
        if await self._ask("/apply-template", {"messages": _PROBE_ONE}) is None:
            return None
        return await self._template_cost(LLAMACPP)

    async def _probe_vllm(self) -> TokenizerApi | None:
        payload = {"model": self.model, "messages": _PROBE_ONE, "add_generation_prompt": True}
        answer = await self._ask("/tokenize", payload)
        if answer is None or not isinstance(answer.get("count"), int):
            return None
        return await self._template_cost(VLLM)

    async def _probe_llama_cpp_python(self) -> TokenizerApi | None:
        answer = await self._ask("/extras/tokenize/count", {"input": ""})
        if answer is None or not isinstance(answer.get("count"), int):
            return None
        return TokenizerApi(LLAMA_CPP_PYTHON, text_overhead=answer["count"])

    # -- counting -----------------------------------------------------------------------------

    async def _templated(self, api: str, messages: Sequence[Mapping[str, Any]]) -> int | None:
        """The server's count of the templated prompt (llama.cpp, vLLM), or None."""
        listed = [dict(message) for message in messages]
        if api == VLLM:
            payload = {"model": self.model, "messages": listed, "add_generation_prompt": True}
            answer = await self._ask("/tokenize", payload)
            return None if answer is None else _count_of(answer)
        if api == LLAMACPP:
            templated = await self._ask("/apply-template", {"messages": listed})
            prompt = templated.get("prompt") if templated is not None else None
            if not isinstance(prompt, str):
                return None
            payload = {"content": prompt, "add_special": False, "parse_special": True}
            answer = await self._ask("/tokenize", payload)
            return None if answer is None else _count_of(answer)
        return None

    async def _text(self, api: str, text: str, overhead: int) -> int | None:
        """The server's count of one text (what it adds to any text taken off)."""
        if api == LLAMACPP:
            payload: dict[str, Any] = {"content": text, "add_special": False}
            payload["parse_special"] = False
            answer = await self._ask("/tokenize", payload)
        elif api == VLLM:
            payload = {"model": self.model, "prompt": text, "add_special_tokens": False}
            answer = await self._ask("/tokenize", payload)
        elif api == LLAMA_CPP_PYTHON:
            answer = await self._ask("/extras/tokenize/count", {"input": text})
        else:
            return None
        return None if answer is None else max(0, _count_of(answer) - overhead)

    async def count_prompt(self, messages: Sequence[Mapping[str, Any]]) -> tuple[int, str] | None:
        """(the prompt's count, its source) by the server, or None when it has no tokenizer.

        llama.cpp and vLLM count the templated prompt (source "server", exact); for
        llama-cpp-python it is the messages' texts counted by the server plus the template's
        measured cost (source "server_text")."""
        found = await self.api()
        if found.api in (LLAMACPP, VLLM):
            total = await self._templated(found.api, messages)
            return None if total is None else (total, SERVER)
        if found.api == LLAMA_CPP_PYTHON:
            counts = await self.count_messages(messages)
            if counts is None:
                return None
            return sum(counts) + found.priming, SERVER_TEXT
        return None

    async def count_messages(self, messages: Sequence[Mapping[str, Any]]) -> list[int] | None:
        """Each message's count as the server's tokenizer makes it (its text, cached by
        content, plus the template's framing), or None without a tokenizer."""
        found = await self.api()
        if found.api not in APIS:
            return None
        texts = [_message_text(message) for message in messages]
        if any(text is None for text in texts):
            return None
        missing = {t for t in texts if t is not None and _digest(t) not in self._texts}
        gate = asyncio.Semaphore(CONCURRENCY)

        async def count(text: str) -> None:
            async with gate:
                counted = await self._text(found.api, text, found.text_overhead)
            if counted is not None:
                self._texts[_digest(text)] = counted

        await asyncio.gather(*(count(text) for text in missing))
        counts = []
        for text in texts:
            counted = self._texts.get(_digest(text or ""))
            if counted is None:
                return None
            counts.append(counted + found.framing)
        return counts

    async def learn(self, counts: ServerCounts, messages: Sequence[Mapping[str, Any]]) -> bool:
        """Count `messages` with the server and teach `counts` their exact counts (for the
        trimmer and the budget gauge); False when the server has no tokenizer."""
        counted = await self.count_messages(messages)
        if counted is None:
            return False
        found = self._found
        counts.learn(messages, counted, found.priming if found else REPLY_PRIMING)
        counts.templated = found is not None and found.api in TEMPLATED
        return True


def might_exceed(
    messages: Sequence[Mapping[str, Any]],
    budget: int,
    framing: int,
    priming: int = REPLY_PRIMING,
) -> bool:
    """Whether `messages` could be over `budget` tokens. A token of a byte-level BPE covers at
    least one byte, so a prompt whose texts' UTF-8 size plus the template's tokens fits the
    budget needs no count to know it fits (a message with other parts: assume it might not)."""
    size = priming + framing * len(messages)
    for message in messages:
        text = _message_text(message)
        if text is None:
            return True
        size += len(text.encode("utf-8", "surrogatepass"))
        if size > budget:
            return True
    return False


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class ServerCounts:
    """A prompt counter for the trimmer and the budget gauge that uses the server's counts
    where it has them (taught by `ServerTokenizer.learn`) and the local counter's for the rest.

    It counts as TokenCounter does (`count_each`, `count_messages`, `reply_priming`,
    `calibrated`, `exact`), so `trim` and `build_request` take it in its place; messages it
    knows cost no local counting (no vocabulary is loaded when every message is known)."""

    def __init__(self, local: TokenCounter, calibration: Calibration | None = None) -> None:
        self.local = local
        self.reply_priming = REPLY_PRIMING
        self._exact: dict[MessageKey, int] = {}
        # The server templates the prompt it counts (llama.cpp, vLLM), or counts texts only
        # and the template's tokens are the local recipe's (llama-cpp-python): then a total
        # is an estimate, however exact its parts.
        self.templated = False
        # How the server's own `usage` compared with these counts, per endpoint and model:
        # a template that drops a message (llama-cpp-python's gemma format drops the system
        # prompt) makes every count high, and usage wins.
        self.calibration = calibration if calibration is not None else Calibration()

    def learn(
        self, messages: Sequence[Mapping[str, Any]], counts: Sequence[int], priming: int
    ) -> None:
        """The server's counts of `messages` (each text's count plus the template's framing),
        and the template's cost per prompt."""
        for message, count in zip(messages, counts, strict=True):
            self._exact[message_key(message)] = count
        self.reply_priming = priming

    @property
    def disagreed(self) -> bool:
        """The server's usage has not matched these counts (within AGREEMENT)."""
        calibration = self.calibration
        return calibration.samples > 0 and abs(calibration.ratio - 1.0) > AGREEMENT

    def known(self, messages: Sequence[Mapping[str, Any]]) -> bool:
        """Whether every message's count is the server's."""
        return bool(self._exact) and all(message_key(m) in self._exact for m in messages)

    def count_each(self, messages: Sequence[Mapping[str, Any]]) -> list[int]:
        exact_get = self._exact.get
        counts: list[int | None] = [exact_get(message_key(m)) for m in messages]
        missing = [i for i, count in enumerate(counts) if count is None]
        if missing:
            estimates = self.local.count_each([messages[i] for i in missing])
            for i, estimate in zip(missing, estimates, strict=True):
                counts[i] = self.local.calibrated(estimate)
        return [count or 0 for count in counts]

    def count_messages(self, messages: Sequence[Mapping[str, Any]]) -> int:
        return sum(self.count_each(messages)) + self.reply_priming

    def calibrated(self, n: int) -> int:
        """The count corrected by what the server's usage said of earlier ones (unchanged
        while they agreed)."""
        return self.calibration.apply(n) if self.disagreed else n

    def prompt_source(self, messages: Sequence[Mapping[str, Any]]) -> str:
        """SERVER_TEXT when the server counted every message, else ESTIMATE."""
        return SERVER_TEXT if self.known(messages) else ESTIMATE

    @property
    def exact(self) -> bool:
        """Whether a total is the server's count of the templated prompt (for the messages
        it was taught): its template's, and never contradicted by its usage since."""
        return bool(self._exact) and self.templated and not self.disagreed

    def count_text(self, text: str) -> int:
        return self.local.count_text(text)

    def record_usage(self, counted: int, actual: int) -> None:
        """The server's `usage.prompt_tokens` for a prompt these counts put at `counted`:
        learnt for this endpoint and model, so the next total follows usage."""
        self.calibration.record(counted, actual)


def server_calibration(base_url: str, model: str) -> Calibration:
    """How the server's usage compared with its own counts, per endpoint and model, kept
    across runs beside the local estimate's (keyed by a hash: no URL is written)."""
    return Calibration(f"server {ProbeMemory.key(base_url, model)}", CalibrationFile())


def usage_agrees(counted: int | None, usage: int | None) -> bool | None:
    """Whether the server's usage matched the count firsttoken had for a prompt (None: one
    of them is missing). A couple of tokens either way agree on any prompt."""
    if counted is None or usage is None:
        return None
    return abs(usage - counted) <= max(2, AGREEMENT * usage)
