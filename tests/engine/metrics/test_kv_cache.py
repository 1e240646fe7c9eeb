"""The KV cache a prompt fills, against values worked out by hand from each model's published
config, and which preset a model id names."""

from __future__ import annotations

import pytest

from tui.engine.metrics.architectures import FAMILIES, architecture_for
from tui.engine.metrics.kv_cache import Architecture, KvModel, human_bytes, kv_bytes, kv_phrase

LLAMA_8B = FAMILIES["llama3"][8]
QWEN_7B = FAMILIES["qwen2.5"][7]
GEMMA_270M = FAMILIES["gemma3"][0.27]
DEEPSEEK = FAMILIES["deepseek3"][671]


def test_llama_3_1_8b_holds_128_kib_a_token_at_f16() -> None:
    # 2 (K and V) x 32 layers x 8 KV heads x 128 dims x 2 bytes = 131,072 bytes a token.
    assert kv_bytes(LLAMA_8B, 1) == 131_072
    assert kv_bytes(LLAMA_8B, 8192) == 1 << 30  # an 8k context: exactly 1 GiB
    # The article's formula with the hidden size (4,096) would say 4x as much: GQA shares heads.
    article = 2 * 32 * 4096 * 8192 * 2
    assert article == 4 * kv_bytes(LLAMA_8B, 8192)


def test_qwen2_5_7b_and_the_quantised_cache_types() -> None:
    # 2 x 28 layers x 4 KV heads x 128 dims = 28,672 elements a token.
    assert kv_bytes(QWEN_7B, 1000) == 28_672 * 1000 * 2
    assert kv_bytes(QWEN_7B, 1000, "q8_0") == round(28_672 * 1000 * 34 / 32)
    assert kv_bytes(QWEN_7B, 1000, "q4_0") == round(28_672 * 1000 * 18 / 32)


def test_gemma_3_sliding_window_layers_keep_at_most_the_window() -> None:
    # 18 layers, 1 KV head of 256 dims; 15 sliding layers keep 512 tokens, 3 global keep all.
    per_token_layer = 2 * 1 * 256 * 2
    assert kv_bytes(GEMMA_270M, 300) == 18 * 300 * per_token_layer  # inside the window
    assert kv_bytes(GEMMA_270M, 2000) == (3 * 2000 + 15 * 512) * per_token_layer


def test_deepseek_v3_keeps_one_latent_a_token_and_layer() -> None:
    # MLA: kv_lora_rank 512 + rope 64 = 576 elements per token and layer, 61 layers.
    assert kv_bytes(DEEPSEEK, 1) == 576 * 61 * 2


@pytest.mark.parametrize(
    ("model_id", "name"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "Llama 3.1 8B"),
        ("llama3.3:70b", "Llama 3.x 70B"),
        ("qwen2.5:7b-instruct-q4_K_M", "Qwen2.5 7B"),
        ("Qwen/Qwen3-30B-A3B", "Qwen3 30B-A3B"),
        ("/models/gemma-3-270m-q4_k_m.gguf", "Gemma 3 270M"),
        ("google/gemma-3-27b-it", "Gemma 3 27B"),
        ("mistral-nemo:latest", "Mistral Nemo 12B"),
        ("deepseek-ai/DeepSeek-R1", "DeepSeek V3/R1 671B"),
    ],
)
def test_a_model_id_names_its_preset(model_id: str, name: str) -> None:
    found = architecture_for(model_id)
    assert found is not None and found.name == name


@pytest.mark.parametrize(
    "model_id", ["gpt-4o-mini", "deepseek-r1-distill-qwen-7b", "llama3.1:13b", "qwen3"]
)
def test_an_id_no_preset_names_gets_no_guess(model_id: str) -> None:
    assert architecture_for(model_id) is None


def test_the_records_figures_and_their_words() -> None:
    model = KvModel(Architecture("m", 32, 8, 128), "config", "q8_0")
    figures = model.figures(1000, 8192)
    assert figures == {
        "architecture": "m",
        "source": "config",
        "cache_type": "q8_0",
        "prompt_tokens": 1000,
        "prompt_bytes": 69_632_000,
        "context_tokens": 8192,
        "context_bytes": 570_425_344,
    }
    assert kv_phrase(figures) == "KV 66.4 MiB q8_0 · 8,192-token context 544 MiB"
    assert model.figures(None, None)["prompt_bytes"] is None
    assert human_bytes(512) == "512 B" and human_bytes(3 << 30) == "3.0 GiB"
