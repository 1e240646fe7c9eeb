"""Reply tokens (deterministic, never splitting a character) and the latency model's presets."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.demo.latency_model import PRESETS, latency_model
from tui.demo.reply import (
    MAX_REPLY_TOKENS,
    ReplySummary,
    natural_reply,
    reply_tokens,
    requested_length,
    requested_thinking,
    sentence_end,
    tokenize,
)

SUMMARY = ReplySummary(
    messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}],
    prompt_tokens=213,
    prefill_ms=255.6,
    model="m",
    preset="cpu-small",
    stream=True,
    fixed_ms=1.0,
    prefill_ms_per_token=1.2,
    decode_tokens_per_s=60.0,
)


@given(st.text())
def test_tokens_rejoin_to_the_text(text: str) -> None:
    assert "".join(tokenize(text)) == text
    assert all(tokenize(text))  # no empty tokens


def test_every_token_is_valid_utf8_on_its_own() -> None:
    for token in reply_tokens(SUMMARY, 400):
        assert token.encode("utf-8").decode("utf-8") == token
    cjk = [t for t in tokenize("中文：首个令牌延迟（TTFT）") if not t.isascii()]
    assert all(len(t) == 1 for t in cjk)


def test_reply_has_markdown_code_and_cjk_and_exact_length() -> None:
    tokens = reply_tokens(SUMMARY, 120)
    text = "".join(tokens)
    assert len(tokens) == 120
    assert text.startswith("## firsttoken demo reply (simulated)\n")
    assert "**2 messages** (1 system, 1 user)" in text and "**213 prompt tokens**" in text
    assert "simulated prefill **256 ms**" in text and "streaming" in text
    assert "\n- " in text and "```python\n" in text and "首个令牌延迟" in text
    long = reply_tokens(SUMMARY, 5000)
    assert len(long) == 5000 and long[:120] == tokens  # longer replies extend, never reshuffle
    assert reply_tokens(SUMMARY, 5000) == long


def test_requested_length() -> None:
    def ask(text: object) -> int | None:
        return requested_length([{"role": "user", "content": text}])

    assert ask("please reply 42 tokens") == 42
    assert ask("REPLY WITH 1 TOKEN") == 1
    assert ask("reply 999999999 tokens") == MAX_REPLY_TOKENS
    assert ask("reply a few tokens") is None
    assert ask([{"type": "text", "text": "reply 9 tokens"}]) == 9
    # Only the latest user message counts.
    messages = [
        {"role": "user", "content": "reply 5 tokens"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "now something else"},
    ]
    assert requested_length(messages) is None


def test_sentence_end_keeps_whole_sentences_and_blocks() -> None:
    tokens = tokenize("One two. Three four five.\n\nSix seven")
    assert sentence_end(tokens, 3) == 3  # "One two."
    assert sentence_end(tokens, 6) == 3  # "Three four" would stop mid-sentence
    assert sentence_end(tokens, 7) == 7  # "... five." and the paragraph ends
    assert sentence_end(tokens, 100) == 7  # "Six seven" has no end
    assert sentence_end(tokens, 2) == 2  # nothing ends that early: the limit itself
    assert sentence_end(tokenize("v1.2 is out"), 2) == 2  # a dot inside a word ends nothing


@given(st.integers(min_value=1, max_value=700))
def test_natural_reply_ends_at_a_sentence_within_the_limit(limit: int) -> None:
    tokens = natural_reply(SUMMARY, limit)
    longer = reply_tokens(SUMMARY, limit + 1)
    assert tokens == longer[: len(tokens)] and 0 < len(tokens) <= limit
    text = "".join(tokens)
    if len(tokens) < limit or limit >= 8:  # the heading alone is 7 tokens
        # Never inside a code fence, never mid-sentence: a full stop, or a block's end.
        assert text.count("```") % 2 == 0
        following = "".join(longer[len(tokens) :])
        assert text.rstrip().endswith((".", "。", ")", "```")) or following.startswith("\n\n")


def test_requested_thinking() -> None:
    assert requested_thinking([{"role": "user", "content": "think 40 tokens"}]) == 40
    assert requested_thinking([{"role": "user", "content": "Think for 5 tokens first"}]) == 5
    assert requested_thinking([{"role": "user", "content": "reply 40 tokens"}]) is None


def test_presets_match_the_measurements() -> None:
    assert set(PRESETS) == {"cpu-small", "seed-qwen7b", "h100-70b", "instant"}
    cpu = PRESETS["cpu-small"]
    assert (cpu.prefill_ms_per_token, cpu.decode_tokens_per_s) == (1.2, 60)
    # The 7B deployment in README's Origins: 8,200 prompt tokens -> about 3.5 s; 5,800 -> 2.4 s.
    qwen = PRESETS["seed-qwen7b"]
    assert qwen.ttft_ms(8200) == pytest.approx(3500, rel=0.02)
    assert qwen.ttft_ms(5800) == pytest.approx(2400, rel=0.04)
    # Published H100 figures: 48 ms at 500 tokens, 407 ms at 5,000.
    h100 = PRESETS["h100-70b"]
    assert h100.ttft_ms(500) == pytest.approx(48, rel=0.05)
    assert h100.ttft_ms(5000) == pytest.approx(407, rel=0.05)
    assert PRESETS["instant"].ttft_ms(10_000) == 0
    assert cpu.describe() == "1.2 ms/prompt token, 60 tok/s"


def test_overrides_and_their_errors() -> None:
    model = latency_model("cpu-small", {"decode_tokens_per_s": 500, "jitter_ms": 10, "seed": 3})
    assert (model.decode_tokens_per_s, model.seed, model.preset) == (500, 3, "cpu-small")
    assert 0 <= model.jitter(1) <= 10 and model.jitter(1) == model.jitter(1)
    assert model.ttft_ms(100, draw=1) >= model.rtt_ms + model.prefill_ms(100)
    with pytest.raises(ValueError, match=r"unknown demo preset 'gpu'.*cpu-small, seed-qwen7b"):
        latency_model("gpu")
    with pytest.raises(ValueError, match="'decode_rate'"):
        latency_model("cpu-small", {"decode_rate": 5})
    with pytest.raises(ValueError, match="decode_tokens_per_s = 0"):
        latency_model("cpu-small", {"decode_tokens_per_s": 0})
    with pytest.raises(ValueError, match="rtt_ms = -1"):
        latency_model("cpu-small", {"rtt_ms": -1})
