"""What a prompt costs the server's memory: the KV cache its tokens fill, in bytes.

Every layer keeps a key and a value vector per token for each KV head. The article behind the
product sizes it as 2 × layers × hidden × tokens × bytes, which holds for full multi-head
attention only; today's models share KV heads between query heads (grouped-query attention),
so the vector is KV heads × head dim, not the hidden size:

    bytes = 2 × layers × kv_heads × head_dim × tokens × bytes_per_element

Two refinements where a family needs them: layers with a sliding window (Gemma 3) keep at most
the window's tokens; multi-head latent attention (DeepSeek V3) keeps one compressed latent of
`latent_dim` elements per token and layer instead of a key and a value. The cache's element
type sets the bytes: 2 for f16 (llama.cpp's and vLLM's default), and llama.cpp's quantised
cache types (`--cache-type-k/-v`) at their block sizes: q8_0 is 34 bytes per 32 elements,
q4_0 18 per 32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Bytes per element of each cache type (llama.cpp's block formats: scale(s) + packed values).
BYTES_PER_ELEMENT: dict[str, float] = {
    "f32": 4.0,
    "f16": 2.0,
    "bf16": 2.0,
    "q8_0": 34 / 32,
    "q5_1": 24 / 32,
    "q5_0": 22 / 32,
    "q4_1": 20 / 32,
    "q4_0": 18 / 32,
}
CACHE_TYPES = tuple(BYTES_PER_ELEMENT)
DEFAULT_CACHE_TYPE = "f16"


@dataclass(frozen=True)
class Architecture:
    name: str
    layers: int
    kv_heads: int
    head_dim: int
    sliding_window: int | None = None  # tokens a sliding-window layer keeps
    sliding_layers: int = 0  # how many of the layers use the window
    latent_dim: int | None = None  # MLA: elements per token and layer (no separate K and V)

    @property
    def elements_per_token_layer(self) -> int:
        if self.latent_dim is not None:
            return self.latent_dim
        return 2 * self.kv_heads * self.head_dim


def kv_bytes(architecture: Architecture, tokens: int, cache_type: str = DEFAULT_CACHE_TYPE) -> int:
    """The KV cache `tokens` of context fill, in bytes, at `cache_type`."""
    per_layer = architecture.elements_per_token_layer
    sliding = architecture.sliding_layers if architecture.sliding_window else 0
    full = architecture.layers - sliding
    windowed = min(tokens, architecture.sliding_window or 0)
    elements = per_layer * (full * tokens + sliding * windowed)
    return round(elements * BYTES_PER_ELEMENT[cache_type])


@dataclass(frozen=True)
class KvModel:
    """A model's architecture, where it came from ("preset", "config") and its cache's type."""

    architecture: Architecture
    source: str
    cache_type: str = DEFAULT_CACHE_TYPE

    def figures(self, prompt_tokens: int | None, context_tokens: int | None) -> dict[str, Any]:
        """The record's `kv_cache`: the prompt's bytes and the whole context window's."""
        arch, kind = self.architecture, self.cache_type
        return {
            "architecture": arch.name,
            "source": self.source,
            "cache_type": kind,
            "prompt_tokens": prompt_tokens,
            "prompt_bytes": None if prompt_tokens is None else kv_bytes(arch, prompt_tokens, kind),
            "context_tokens": context_tokens,
            "context_bytes": None
            if context_tokens is None
            else kv_bytes(arch, context_tokens, kind),
        }


def human_bytes(size: float) -> str:
    """ "1.3 MiB", "512 KiB", "72 GiB": binary units, as GPU memory is counted."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            if unit == "B":
                return f"{size:.0f} B"
            return f"{size:.1f} {unit}" if size < 100 else f"{size:.0f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def kv_phrase(kv: dict[str, Any]) -> str | None:
    """ "KV 1.3 MiB f16 · 8,192-token context 9.0 MiB" for a record's `kv_cache`."""
    prompt = kv.get("prompt_bytes")
    if not isinstance(prompt, int):
        return None
    words = f"KV {human_bytes(prompt)} {kv.get('cache_type')}"
    context, tokens = kv.get("context_bytes"), kv.get("context_tokens")
    if isinstance(context, int) and isinstance(tokens, int):
        words += f" · {tokens:,}-token context {human_bytes(context)}"
    return words
