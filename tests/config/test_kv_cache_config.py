"""[llm.kv_cache] in config.toml: the cache's type, and the shape of a model no preset names;
a half-described shape is a one-line error naming what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.config import ConfigError, ConfigFlags, load_config
from tui.engine.metrics.kv_cache import kv_bytes
from tui.wiring import kv_models


def config_from(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "config.toml"
    path.write_text(text)
    path.chmod(0o600)
    return load_config(ConfigFlags(config_path=path), env={}, cwd=tmp_path)


def test_a_models_own_shape_and_a_quantised_cache(tmp_path: Path) -> None:
    config = config_from(
        tmp_path,
        '[llm]\nmodel = "house-model"\n[llm.kv_cache]\ntype = "q4_0"\n'
        "layers = 40\nkv_heads = 8\nhead_dim = 128\n",
    )
    model = kv_models(config)("house-model")
    assert model is not None and (model.source, model.cache_type) == ("config", "q4_0")
    assert kv_bytes(model.architecture, 100, "q4_0") == round(2 * 40 * 8 * 128 * 100 * 18 / 32)
    # Other models still get their presets, at the configured cache type.
    preset = kv_models(config)("qwen2.5:7b")
    assert preset is not None and preset.source == "preset" and preset.cache_type == "q4_0"
    assert kv_models(config)("gpt-4o-mini") is None


def test_a_preset_named_for_the_configured_model(tmp_path: Path) -> None:
    config = config_from(
        tmp_path, '[llm]\nmodel = "prod-chat"\n[llm.kv_cache]\narchitecture = "Qwen3 8B"\n'
    )
    model = kv_models(config)("prod-chat")
    assert model is not None and model.architecture.name == "Qwen3 8B"
    assert model.cache_type == "f16"


def test_a_half_described_shape_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        config_from(tmp_path, "[llm.kv_cache]\nlayers = 32\n")
    message = str(raised.value)
    assert "\n" not in message and "config.toml" in message
    assert "without head_dim, kv_heads: set head_dim, kv_heads too" in message


def test_an_unknown_cache_type_is_refused_with_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        config_from(tmp_path, '[llm.kv_cache]\ntype = "fp8"\n')
    assert "llm.kv_cache.type" in str(raised.value) and "q8_0" in str(raised.value)
