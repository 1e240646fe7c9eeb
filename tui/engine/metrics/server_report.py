"""What a server says about its own side of a request, read from the reply it sends anyway.

No extra request is made: these are fields of chunks (or of the non-stream body) that arrive
with the reply. What is read, by whom it is sent:

- `usage.prompt_tokens`, `usage.prompt_tokens_details.cached_tokens` (OpenAI, vLLM with
  `--enable-prompt-tokens-details`, llama.cpp's `llama-server`), `usage.prompt_cache_hit_tokens`
  (DeepSeek), `usage.completion_tokens_details.reasoning_tokens` (OpenAI, OpenRouter, vLLM);
- `timings` (llama.cpp's `llama-server`, last chunk): `cache_n`, `prompt_n`, `prompt_ms`,
  `predicted_n`, `predicted_ms`, and with speculative decoding `draft_n`, `draft_n_accepted`;
- `metrics` (vLLM with `--enable-per-request-metrics`): `queue_time_ms`,
  `time_to_first_token_ms` (from scheduling to the first token: the prefill),
  `generation_time_ms`;
- `stats` (LM Studio's own REST API, `/api/v0`): `time_to_first_token`, `generation_time`
  (seconds);
- `usage.queue_time`, `usage.prompt_time`, `usage.completion_time` (Groq, seconds; in a stream
  under `x_groq.usage`).

The result is one small mapping (`as_dict`), the record's `server`:

| key | meaning |
|---|---|
| `source` | the fields it came from, e.g. `["usage", "timings"]` |
| `prompt_tokens` | the prompt as the server counted it |
| `cached_tokens` | prompt tokens served from the server's prefix cache |
| `prefilled_tokens` | prompt tokens the server computed (llama.cpp's `prompt_n`) |
| `reasoning_tokens` | output tokens spent thinking (part of the output count) |
| `queue_ms` | waiting before the server started on the request |
| `prefill_ms` | the server's work on the prompt, up to the first token |
| `decode_ms` | the server's time from the first token to the last |
| `decoded_tokens` | the tokens that decode time covers (llama.cpp's `predicted_n`) |
| `draft_tokens` | tokens a draft model proposed (speculative decoding; llama.cpp's `draft_n`) |
| `draft_accepted` | of them, the tokens the model accepted (`draft_n_accepted`) |

A key the server did not send is null: nothing is inferred.
"""

from __future__ import annotations

from typing import Any

KEYS = (
    "prompt_tokens",
    "cached_tokens",
    "prefilled_tokens",
    "reasoning_tokens",
    "queue_ms",
    "prefill_ms",
    "decode_ms",
    "decoded_tokens",
    "draft_tokens",
    "draft_accepted",
)


def _int(value: object) -> int | None:
    """A count, when the server sent a whole number (bool is not one)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    return None


def _ms(value: object, scale: float = 1.0) -> float | None:
    """A non-negative duration in ms (`scale` 1000 for seconds); None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value) * scale
    return value if value >= 0.0 and value == value and value != float("inf") else None


def _object(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


class ServerReport:
    """Accumulates what the chunks of one reply report; later chunks win (the last is final)."""

    __slots__ = ("figures", "sources")

    def __init__(self) -> None:
        self.figures: dict[str, int | float] = {}
        self.sources: list[str] = []

    def _put(self, source: str, key: str, value: int | float | None) -> None:
        if value is None:
            return
        self.figures[key] = value
        if source not in self.sources:
            self.sources.append(source)

    def take(self, chunk: dict[str, Any]) -> None:
        """Read one chunk (or a whole body). Cheap when it carries none of these fields."""
        usage = _object(chunk.get("usage"))
        if usage is not None:
            self._usage(usage)
        timings = _object(chunk.get("timings"))
        if timings is not None:
            self._timings(timings)
        metrics = _object(chunk.get("metrics"))
        if metrics is not None:
            self._vllm_metrics(metrics)
        stats = _object(chunk.get("stats"))
        if stats is not None:
            self._lmstudio_stats(stats)
        groq = _object(chunk.get("x_groq"))
        if groq is not None and (groq_usage := _object(groq.get("usage"))) is not None:
            self._usage(groq_usage)

    def _usage(self, usage: dict[str, Any]) -> None:
        put = self._put
        put("usage", "prompt_tokens", _int(usage.get("prompt_tokens")))
        details = _object(usage.get("prompt_tokens_details"))
        cached = _int(details.get("cached_tokens")) if details is not None else None
        if cached is None:
            cached = _int(usage.get("prompt_cache_hit_tokens"))  # DeepSeek
        put("usage", "cached_tokens", cached)
        output = _object(usage.get("completion_tokens_details"))
        if output is not None:
            put("usage", "reasoning_tokens", _int(output.get("reasoning_tokens")))
        # Groq reports its own timing in usage, in seconds.
        put("usage", "queue_ms", _ms(usage.get("queue_time"), 1000.0))
        put("usage", "prefill_ms", _ms(usage.get("prompt_time"), 1000.0))
        put("usage", "decode_ms", _ms(usage.get("completion_time"), 1000.0))

    def _timings(self, timings: dict[str, Any]) -> None:
        put = self._put
        cached = _int(timings.get("cache_n"))
        prefilled = _int(timings.get("prompt_n"))
        put("timings", "cached_tokens", cached)
        put("timings", "prefilled_tokens", prefilled)
        if cached is not None and prefilled is not None and "prompt_tokens" not in self.figures:
            put("timings", "prompt_tokens", cached + prefilled)
        put("timings", "prefill_ms", _ms(timings.get("prompt_ms")))
        put("timings", "decode_ms", _ms(timings.get("predicted_ms")))
        put("timings", "decoded_tokens", _int(timings.get("predicted_n")))
        put("timings", "draft_tokens", _int(timings.get("draft_n")))
        put("timings", "draft_accepted", _int(timings.get("draft_n_accepted")))

    def _vllm_metrics(self, metrics: dict[str, Any]) -> None:
        put = self._put
        put("metrics", "queue_ms", _ms(metrics.get("queue_time_ms")))
        put("metrics", "prefill_ms", _ms(metrics.get("time_to_first_token_ms")))
        put("metrics", "decode_ms", _ms(metrics.get("generation_time_ms")))

    def _lmstudio_stats(self, stats: dict[str, Any]) -> None:
        put = self._put
        put("stats", "prefill_ms", _ms(stats.get("time_to_first_token"), 1000.0))
        put("stats", "decode_ms", _ms(stats.get("generation_time"), 1000.0))

    def as_dict(self) -> dict[str, Any] | None:
        """The record's `server` mapping (every key present, null where not reported), or
        None when the server reported nothing at all."""
        if not self.sources:
            return None
        report: dict[str, Any] = {"source": list(self.sources)}
        for key in KEYS:
            report[key] = self.figures.get(key)
        return report


def draft_acceptance(server: dict[str, Any]) -> float | None:
    """The share of drafted tokens the model accepted (0..1), when the server reported both."""
    drafted, accepted = server.get("draft_tokens"), server.get("draft_accepted")
    if not isinstance(drafted, int) or not isinstance(accepted, int) or drafted <= 0:
        return None
    return min(1.0, accepted / drafted)


def server_prefill_rate(server: dict[str, Any] | None) -> float | None:
    """Prompt tokens the server computed a second, by its own clock (llama.cpp's `prompt_n`
    over `prompt_ms`), when it reported both."""
    if server is None:
        return None
    tokens, ms = server.get("prefilled_tokens"), server.get("prefill_ms")
    if not isinstance(tokens, int) or not isinstance(ms, int | float) or tokens <= 0 or ms <= 0:
        return None
    return tokens / (ms / 1000.0)
