"""The demo endpoint's latency model: when the first token and each later token are due.

TTFT = network round trip + queue + prompt tokens x prefill time per token (+ seeded jitter);
then tokens are decoded at a fixed rate. With `prefix_cache`, the server charges prefill only
for the prompt beyond what the previous request shared with it (as llama.cpp reuses its slot's
cached prefix). `server` names the real server whose dialect the endpoint speaks (dialects.py).
The presets are grounded in measurements (docs/demo.md#latency-presets); every number the
demo endpoint produces is simulated.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from tui.demo.dialects import SERVER_DIALECTS


@dataclass(frozen=True)
class LatencyModel:
    preset: str
    rtt_ms: float
    queue_ms: float
    prefill_ms_per_token: float
    decode_tokens_per_s: float
    jitter_ms: float = 0.0
    seed: int = 0
    reply_tokens: int = 120
    prefix_cache: bool = False  # reuse the previous request's prompt prefix (llama.cpp does)
    server: str = "openai"  # whose dialect: one of dialects.SERVER_DIALECTS
    # Speculative decoding played in llama.cpp's `timings`: the share of a draft model's tokens
    # the model accepts (0: no draft model).
    draft_acceptance: float = 0.0

    def prefill_ms(self, prompt_tokens: int) -> float:
        """Simulated prompt processing time (no network, no queue, no jitter)."""
        return prompt_tokens * self.prefill_ms_per_token

    def jitter(self, draw: int) -> float:
        """Extra ms for the draw-th request: uniform in [0, jitter_ms], reproducible by seed.

        Only ever added, so TTFT never undercuts rtt + queue + prefill (tests rely on that).
        """
        if self.jitter_ms <= 0:
            return 0.0
        return random.Random(f"{self.seed}:{draw}").uniform(0.0, self.jitter_ms)

    def ttft_ms(self, prompt_tokens: int, draw: int = 0) -> float:
        return self.rtt_ms + self.queue_ms + self.prefill_ms(prompt_tokens) + self.jitter(draw)

    def token_offset_s(self, index: int) -> float:
        """Seconds from the first content token to token `index` (0-based)."""
        return index / self.decode_tokens_per_s

    def describe(self) -> str:
        """'1.2 ms/prompt token, 60 tok/s' — the numbers a user recognises."""
        return f"{self.prefill_ms_per_token:g} ms/prompt token, {self.decode_tokens_per_s:g} tok/s"


PRESETS: dict[str, LatencyModel] = {
    # Gemma 3 270M (Q4) under llama.cpp's server on 2 CPU cores: ~1.2 ms per prompt token up
    # to 2k tokens, 50-80 output tok/s, over loopback (a ~1 ms round trip). The server reuses
    # the previous request's prompt prefix, so an identical repeat is answered almost at once.
    "cpu-small": LatencyModel(
        "cpu-small", 1.0, 0.0, 1.2, 60.0, prefix_cache=True, server="llamacpp"
    ),
    # The 7B deployment of the article firsttoken grew from (README, Origins): 8,200 prompt
    # tokens -> 3.5 s TTFT and 5,800 -> 2.4 s, i.e. ~0.42 ms per token plus ~30 ms of network;
    # ~25 tok/s decode. Such GPU deployments are usually vLLM, so is this one's dialect.
    "seed-qwen7b": LatencyModel("seed-qwen7b", 30.0, 0.0, 0.42, 25.0, server="vllm"),
    # A 70B model on two H100s (published): TTFT 48 ms at 500 prompt tokens, 407 ms at 5,000:
    # slope 0.08 ms per token, intercept ~8 ms; 53 tok/s decode.
    "h100-70b": LatencyModel("h100-70b", 8.0, 0.0, 0.08, 53.0, server="vllm"),
    # No latency at all, for tests: the protocol, not the timing, is under test; OpenAI's dialect.
    "instant": LatencyModel("instant", 0.0, 0.0, 0.0, 100_000.0),
}

_INT_FIELDS = {"seed", "reply_tokens"}
_BOOL_FIELDS = {"prefix_cache"}
_CHOICE_FIELDS = {"server": SERVER_DIALECTS}
_TUNABLE = tuple(f.name for f in fields(LatencyModel) if f.name != "preset")


def latency_model(
    preset: str, overrides: Mapping[str, float | bool | str] | None = None
) -> LatencyModel:
    """The named preset with overrides applied; ValueError naming the bad preset, key or value."""
    if preset not in PRESETS:
        raise ValueError(f"unknown demo preset {preset!r}; choose one of: {', '.join(PRESETS)}")
    changes: dict[str, Any] = {}  # checked per key above; replace() takes each field's type
    for key, value in (overrides or {}).items():
        if key not in _TUNABLE:
            raise ValueError(f"unknown demo latency key {key!r}; known keys: {', '.join(_TUNABLE)}")
        if key in _CHOICE_FIELDS:
            if value not in _CHOICE_FIELDS[key]:
                choices = ", ".join(_CHOICE_FIELDS[key])
                raise ValueError(f"demo {key} = {value!r}: expected one of {choices}")
            changes[key] = value
            continue
        if key in _BOOL_FIELDS:
            if not isinstance(value, bool):
                raise ValueError(f"demo latency {key} = {value!r}: expected true or false")
            changes[key] = value
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"demo latency {key} = {value!r}: expected a number")
        if key == "draft_acceptance" and not 0 <= value <= 1:
            raise ValueError(f"demo latency {key} = {value!r}: expected a share from 0 to 1")
        if (value < 0 and key != "seed") or (key == "decode_tokens_per_s" and value <= 0):
            bound = "greater than 0" if key == "decode_tokens_per_s" else "0 or more"
            raise ValueError(f"demo latency {key} = {value!r}: expected a number {bound}")
        changes[key] = int(value) if key in _INT_FIELDS else float(value)
    return replace(PRESETS[preset], **changes)
