"""The attention shapes of common open model families, for the KV cache's size (kv_cache.py),
and which of them a model id names.

From each model's published config (`num_hidden_layers`, `num_key_value_heads`, `head_dim` or
hidden size / heads, `sliding_window` and its layer pattern, DeepSeek's `kv_lora_rank` +
`qk_rope_head_dim`). Gemma 3 alternates five sliding-window layers with one global layer.
A model that is not here (or not this shape) is described in config.toml's [llm.kv_cache].
"""

from __future__ import annotations

import re

from tui.engine.metrics.kv_cache import Architecture


def _gemma3(name: str, layers: int, kv_heads: int, head_dim: int, window: int) -> Architecture:
    return Architecture(name, layers, kv_heads, head_dim, window, layers - layers // 6)


# family -> size (billions of parameters, as model ids write them) -> architecture
FAMILIES: dict[str, dict[float, Architecture]] = {
    "llama3": {
        1: Architecture("Llama 3.2 1B", 16, 8, 64),
        3: Architecture("Llama 3.2 3B", 28, 8, 128),
        8: Architecture("Llama 3.1 8B", 32, 8, 128),
        70: Architecture("Llama 3.x 70B", 80, 8, 128),
        405: Architecture("Llama 3.1 405B", 126, 8, 128),
    },
    "qwen2.5": {
        0.5: Architecture("Qwen2.5 0.5B", 24, 2, 64),
        1.5: Architecture("Qwen2.5 1.5B", 28, 2, 128),
        3: Architecture("Qwen2.5 3B", 36, 2, 128),
        7: Architecture("Qwen2.5 7B", 28, 4, 128),
        14: Architecture("Qwen2.5 14B", 48, 8, 128),
        32: Architecture("Qwen2.5 32B", 64, 8, 128),
        72: Architecture("Qwen2.5 72B", 80, 8, 128),
    },
    "qwen3": {
        0.6: Architecture("Qwen3 0.6B", 28, 8, 128),
        1.7: Architecture("Qwen3 1.7B", 28, 8, 128),
        4: Architecture("Qwen3 4B", 36, 8, 128),
        8: Architecture("Qwen3 8B", 36, 8, 128),
        14: Architecture("Qwen3 14B", 40, 8, 128),
        30: Architecture("Qwen3 30B-A3B", 48, 4, 128),
        32: Architecture("Qwen3 32B", 64, 8, 128),
        235: Architecture("Qwen3 235B-A22B", 94, 4, 128),
    },
    "gemma3": {
        0.27: _gemma3("Gemma 3 270M", 18, 1, 256, 512),
        1: _gemma3("Gemma 3 1B", 26, 1, 256, 512),
        4: _gemma3("Gemma 3 4B", 34, 4, 256, 1024),
        12: _gemma3("Gemma 3 12B", 48, 8, 256, 1024),
        27: _gemma3("Gemma 3 27B", 62, 16, 128, 1024),
    },
    "mistral": {
        7: Architecture("Mistral 7B", 32, 8, 128),
        12: Architecture("Mistral Nemo 12B", 40, 8, 128),
        24: Architecture("Mistral Small 24B", 40, 8, 128),
    },
    "deepseek3": {
        671: Architecture("DeepSeek V3/R1 671B", 61, 1, 576, latent_dim=576),
    },
}

# How ids spell each family (after lower-casing, with `_`, `:`, `/` and spaces read as `-`).
_FAMILY_NAMES = (
    ("llama3", re.compile(r"llama-?3(?:\.\d)?(?![\d.])")),
    ("qwen2.5", re.compile(r"qwen-?2\.5")),
    ("qwen3", re.compile(r"qwen-?3(?![\d.])")),
    ("gemma3", re.compile(r"gemma-?3(?![\d.])")),
    ("mistral", re.compile(r"mistral|ministral")),
    ("deepseek3", re.compile(r"deepseek-?(?:v3|r1)(?!-distill)")),
)
_SIZE = re.compile(r"(?<![\d.a-z])(\d+(?:\.\d+)?)([bm])(?![a-z])")
_NAMED_SIZES = {"nemo": 12.0, "small": 24.0}


def architecture_for(model_id: str) -> Architecture | None:
    """The preset a model id names ("meta-llama/Llama-3.1-8B-Instruct", "qwen2.5:7b",
    "gemma-3-270m-q4_k_m.gguf"); None for any other id (no guess)."""
    spelled = re.sub(r"[_:/\s]+", "-", model_id.lower())
    for family, pattern in _FAMILY_NAMES:
        found = pattern.search(spelled)
        if found is None:
            continue
        sizes = FAMILIES[family]
        if family == "deepseek3":
            return sizes[671]
        rest = spelled[found.end() :]
        size = next(
            (_NAMED_SIZES[word] for word in _NAMED_SIZES if word in rest and family == "mistral"),
            None,
        )
        if size is None:
            number = _SIZE.search(rest) or _SIZE.search(spelled)
            if number is None:
                return None
            size = float(number.group(1)) / (1000 if number.group(2) == "m" else 1)
        return sizes.get(size)
    return None


def preset_names() -> tuple[str, ...]:
    """Every preset's name, for config.toml's [llm.kv_cache] architecture."""
    return tuple(arch.name for family in FAMILIES.values() for arch in family.values())


def preset_named(name: str) -> Architecture | None:
    return next(
        (arch for family in FAMILIES.values() for arch in family.values() if arch.name == name),
        None,
    )
