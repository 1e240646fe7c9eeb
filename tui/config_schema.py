"""The keys config.toml and settings.json may hold, the Config field each one sets, and the
check each value must pass.

One table per file keeps the schema readable at a glance and lets the loader suggest the
nearest known key for a typo. Checks return the normalised value or raise `Invalid` with what
was expected; the loader adds the file, key and value to make the one-line error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tui.engine.http.base_url import check_base_url
from tui.engine.http.url import BadURL
from tui.engine.metrics.architectures import preset_names
from tui.engine.metrics.kv_cache import CACHE_TYPES
from tui.engine.text.redact import mask_secret, mask_url, redact_text
from tui.providers import PROVIDERS


class ConfigError(Exception):
    """A configuration problem. str() is always one line naming the file, key or flag and the
    fix; it never contains the API key."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.splitlines()))


class Invalid(ValueError):
    """A value failed its check; `expected` says what would have been accepted."""

    def __init__(self, expected: str) -> None:
        super().__init__(expected)
        self.expected = expected


Check = Callable[[Any], Any]

TRIM_STRATEGIES = ("priority", "recent", "none")
PRIORITY_ITEMS = ("system", "latest_user", "tool_result", "history")
# Fallback when tui.demo.latency_model cannot be imported; the real list comes from PRESETS.
KNOWN_DEMO_PRESETS = ("cpu-small", "seed-qwen7b", "h100-70b", "instant")
# The real servers the demo endpoint can play (tui.demo.dialects.SERVER_DIALECTS).
KNOWN_DEMO_SERVERS = ("llamacpp", "vllm", "llama-cpp-python", "openai")


def _is_int(value: Any) -> bool:
    # bool is a subclass of int in Python; `true` must never pass as 1.
    return isinstance(value, int) and not isinstance(value, bool)


def _bounds(low: float | None, high: float | None, above: bool = False) -> str:
    if low is not None and high is not None:
        return f" between {low:g} and {high:g}"
    if low is not None:
        return f" {'>' if above else '>='} {low:g}"
    return ""


def integer(low: int | None = None, high: int | None = None) -> Check:
    expected = "a whole number" + _bounds(low, high)

    def check(value: Any) -> int:
        if not _is_int(value):
            raise Invalid(expected + (", not a boolean" if isinstance(value, bool) else ""))
        if (low is not None and value < low) or (high is not None and value > high):
            raise Invalid(expected)
        return value

    return check


def number(low: float | None = None, high: float | None = None, above: bool = False) -> Check:
    """A float field; ints are accepted (TOML `60` for 60 seconds), booleans are not."""
    expected = "a number" + _bounds(low, high, above)

    def check(value: Any) -> float:
        if not (_is_int(value) or isinstance(value, float)):
            raise Invalid(expected + (", not a boolean" if isinstance(value, bool) else ""))
        if value != value or value in (float("inf"), float("-inf")):  # NaN / inf from TOML
            raise Invalid(expected)
        too_low = low is not None and (value <= low if above else value < low)
        if too_low or (high is not None and value > high):
            raise Invalid(expected)
        return float(value)

    return check


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid("true or false (a boolean, not a string or number)")
    return value


def text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("a non-empty string")
    return value.strip()


def secret(value: Any) -> str | None:
    """The API key: a string; empty (or an unset ${VAR}) means no key."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise Invalid("a string (or leave it out and set FIRSTTOKEN_API_KEY)")
    return value.strip() or None


def url(value: Any) -> str:
    """A base_url requests can be sent to (tui/engine/http/base_url.py says what is wrong)."""
    expected = "an http:// or https:// URL (the API root, often ending in /v1)"
    if not isinstance(value, str):
        raise Invalid(expected)
    try:
        return check_base_url(value)
    except BadURL as bad:
        raise Invalid(f"{expected}, but {bad}") from None


_HEADER_NAME = re.compile(r"[-!#$%&'*+.^_`|~0-9A-Za-z]+")


def header_name(value: Any) -> str:
    """An HTTP header name (letters, digits and -!#$%&'*+.^_`|~)."""
    if not isinstance(value, str) or not _HEADER_NAME.fullmatch(value.strip()):
        raise Invalid("an HTTP header name such as X-Title or api-key")
    return value.strip()


def header_table(value: Any) -> dict[str, str]:
    """Header name -> value; a value may not hold a line break (it would end the header)."""
    expected = 'a table of header name = "value", e.g. { "X-Title" = "firsttoken" }'
    if not isinstance(value, dict):
        raise Invalid(expected)
    headers: dict[str, str] = {}
    for name, item in value.items():
        if not _HEADER_NAME.fullmatch(name) or not isinstance(item, str):
            raise Invalid(expected)
        if any(char in item for char in "\r\n\0"):
            raise Invalid(f"header {name}: a value without line breaks")
        headers[name] = item.strip()
    return headers


def query_table(value: Any) -> dict[str, str]:
    expected = 'a table of parameter = "value", e.g. { "api-version" = "2024-10-21" }'
    if not isinstance(value, dict):
        raise Invalid(expected)
    if not all(isinstance(k, str) and k and isinstance(v, str) for k, v in value.items()):
        raise Invalid(expected)
    return {name: item for name, item in value.items()}


def choice(options: tuple[str, ...]) -> Check:
    expected = "one of " + ", ".join(options)

    def check(value: Any) -> str:
        if value not in options:
            raise Invalid(expected)
        return value

    return check


def text_list(items: tuple[str, ...] | None = None, non_empty: bool = False) -> Check:
    expected = "a list of " + (f"items from {', '.join(items)}" if items else "strings")
    expected += " without repeats"

    def check(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or (non_empty and not value):
            raise Invalid("a non-empty " + expected[2:] if non_empty else expected)
        for item in value:
            if not isinstance(item, str) or not item.strip() or (items and item not in items):
                raise Invalid(expected)
        if len(set(value)) != len(value):
            raise Invalid(expected)
        return tuple(item.strip() for item in value)

    return check


# What an API key looks like (a host name has dots, a path slashes): "sk-…", or a long token.
_KEY_LIKE = re.compile(r"sk-[^\s&?#/@]{4,}|[A-Za-z0-9_-]{20,}")


def show(value: Any) -> str:
    """A value as the user wrote it (JSON and TOML agree on strings, numbers and true/false),
    any URL in it with its credentials masked."""
    if isinstance(value, str):
        value = redact_text(value)
    try:
        shown = json.dumps(value, ensure_ascii=False) if value is not None else "null"
    except (RecursionError, ValueError):
        return "(a value nested too deeply to show)"
    return shown if len(shown) <= 60 else shown[:57] + "..."


def show_url(value: Any) -> str:
    """A base_url as a message may show it: credentials and secret query values masked (with
    or without a scheme), and anything that looks like a key (pasted into the wrong place)
    masked whole."""
    if not isinstance(value, str):
        return show(value)
    words = [mask_url(word) if "?" in word or "@" in word else word for word in value.split()]
    unkeyed = _KEY_LIKE.sub(lambda match: mask_secret(match.group()), " ".join(words))
    return show(redact_text(unkeyed))


@dataclass(frozen=True)
class Key:
    """One key of a config file: its path, the Config field it sets, and its check."""

    path: tuple[str, ...]
    field: str
    check: Check
    secret: bool = False  # never echo the value; an unset ${VAR} means "no value"
    into: str | None = None  # for mapping fields (demo overrides): the key inside the mapping
    echoed: bool = True  # False: a bad value is not repeated in the error (it may hold a key)

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


_DEMO_OVERRIDES: dict[str, Check] = {
    "prefill_ms_per_token": number(0),
    "decode_tokens_per_s": number(0, above=True),
    "rtt_ms": number(0),
    "queue_ms": number(0),
    "jitter_ms": number(0),
    "reply_tokens": integer(1),
    "seed": integer(),
    "prefix_cache": boolean,
    "draft_acceptance": number(0, 1),
    "server": choice(KNOWN_DEMO_SERVERS),
}

_KV_CACHE: dict[str, Check] = {
    "type": choice(CACHE_TYPES),
    "architecture": choice(preset_names()),
    "layers": integer(1),
    "kv_heads": integer(1),
    "head_dim": integer(1),
    "sliding_window": integer(1),
    "sliding_layers": integer(0),
    "latent_dim": integer(1),
}

TOML_KEYS: tuple[Key, ...] = (
    Key(("llm", "provider"), "provider", choice(tuple(PROVIDERS))),
    Key(("llm", "base_url"), "base_url", url),
    Key(("llm", "api_key"), "api_key", secret, secret=True),
    Key(("llm", "api_key_header"), "api_key_header", header_name),
    Key(("llm", "extra_headers"), "extra_headers", header_table, echoed=False),
    Key(("llm", "extra_query"), "extra_query", query_table, echoed=False),
    Key(("llm", "model"), "model", text),
    Key(("llm", "models"), "models", text_list()),
    Key(("llm", "timeout_seconds"), "timeout_seconds", number(0, above=True)),
    Key(("llm", "context_window"), "context_window", integer(1)),
    Key(("llm", "max_retries"), "max_retries", integer(0, 10)),
    Key(("llm", "streaming", "enabled"), "streaming", boolean),
    Key(("llm", "streaming", "chunk_timeout_ms"), "chunk_timeout_ms", integer(1)),
    Key(("llm", "streaming", "stall_timeout_ms"), "stall_timeout_ms", integer(1)),
    Key(("llm", "streaming", "first_token_warn_ms"), "ttft_warn_ms", number(0, above=True)),
    Key(("llm", "prompt", "token_budget"), "token_budget", integer(1)),
    Key(("llm", "prompt", "reserve_for_output"), "reserve_for_output", integer(1)),
    Key(("llm", "prompt", "keep_system"), "keep_system", boolean),
    Key(("llm", "prompt", "keep_latest_user"), "keep_latest_user", boolean),
    Key(("llm", "prompt", "trim_strategy"), "trim_strategy", choice(TRIM_STRATEGIES)),
    *(
        Key(("llm", "kv_cache", name), "kv_cache", check, into=name)
        for name, check in _KV_CACHE.items()
    ),
    Key(("demo", "preset"), "demo_preset", text),
    *(
        Key(("demo", name), "demo_overrides", check, into=name)
        for name, check in _DEMO_OVERRIDES.items()
    ),
)

# Tables whose keys are names chosen by the user (each value is itself checked by the loader).
TOML_NAMED_TABLES: dict[tuple[str, ...], str] = {("llm", "request_classes"): "request_classes"}
REQUEST_CLASS_KEYS: dict[str, Check] = {
    "ttft_target_ms": number(0, above=True),
    "max_output_tokens": integer(1),
}

JSON_KEYS: tuple[Key, ...] = (
    Key(("promptTrimmer", "defaultBudget"), "token_budget", integer(1)),
    Key(("promptTrimmer", "reserveForOutput"), "reserve_for_output", integer(1)),
    Key(("promptTrimmer", "priorityOrder"), "priority_order", text_list(PRIORITY_ITEMS, True)),
    Key(("promptTrimmer", "historyKeepHead"), "history_keep_head", integer(0)),
    Key(("promptTrimmer", "historyKeepTail"), "history_keep_tail", integer(0)),
    Key(("streaming", "enabled"), "streaming", boolean),
    Key(("streaming", "temperature"), "temperature", number(0, 2)),
    Key(("streaming", "maxTokens"), "max_tokens", integer(1)),
    Key(("streaming", "recordTtft"), "record_ttft", boolean),
    Key(("metrics", "ttftWarnMs"), "ttft_warn_ms", number(0, above=True)),
    Key(("metrics", "ttftErrorMs"), "ttft_error_ms", number(0, above=True)),
    Key(("metrics", "logEveryRequest"), "log_every_request", boolean),
)


def demo_presets() -> tuple[str, ...]:
    """The demo endpoint's latency presets (its model module imports in milliseconds)."""
    from tui.demo import PRESETS

    return tuple(PRESETS)
