"""What README, the headless guide and `bench --help` say of the F6 sample's size is what the
sample measures: by the local count, and by the demo endpoint's Gemma tokenizer."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli import ROOT, firsttoken

from tui.demo.dialects import DIALECTS
from tui.demo.prompt import count_prompt
from tui.engine.bench import new_tag, tagged
from tui.engine.tokens.counter import get_counter
from tui.sample_conversation import bloated_sample


def _about(tokens: int) -> str:
    return f"about {round(tokens, -2):,}"


def _sizes() -> tuple[str, str]:
    sample = bloated_sample()
    local = get_counter("gpt-4o-mini").count_messages(sample)
    gemma = count_prompt(DIALECTS["llamacpp"], "m", tagged(sample, new_tag()), 0, None).tokens
    return _about(local), _about(gemma)


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("document", ["README.md", "docs/headless.md"])
def test_the_documents_say_the_measured_sizes(document: str) -> None:
    local, gemma = _sizes()
    text = _flat((ROOT / document).read_text(encoding="utf-8"))
    assert f"{local} tokens by the local count" in text or f"{local} prompt tokens" in text
    assert f"{gemma} by the demo endpoint's Gemma" in text or f"counts {gemma}" in text
    assert "~8,200" not in text and "over 8,000 prompt tokens" not in text


def test_the_samples_own_docstring_says_them() -> None:
    import tui.sample_conversation as module

    local, gemma = _sizes()
    assert f"{local} prompt tokens by the local count" in _flat(module.__doc__ or "").lower()
    assert f"{gemma} by Gemma's tokenizer" in _flat(module.__doc__ or "")


@pytest.mark.e2e
def test_bench_help_says_them(tmp_path: Path) -> None:
    local, gemma = _sizes()
    text = _flat(firsttoken("bench", "--help").stdout)
    assert f"{local} prompt tokens by the local count, {gemma} by a Gemma tokenizer" in text
