"""Request classes judged by what the user asked for, and one verdict with the colours."""

from __future__ import annotations

import pytest

from tui.engine.metrics.record import DEFAULT_REQUEST_CLASSES, RequestClass, Thresholds, TtftLevel
from tui.engine.metrics.request_classes import LONG_PROMPT_CHARS, classify_request


def _classify(
    text: str, max_tokens: int = 2048, asked: bool = False, history: int = 0
) -> tuple[str, str]:
    messages = [{"role": "user", "content": "x" * 100}] * history
    messages = [*messages, {"role": "user", "content": text}]
    chosen = classify_request(messages, max_tokens, asked, DEFAULT_REQUEST_CLASSES)
    assert chosen is not None
    return chosen.request_class.name, chosen.reason


def test_a_short_question_is_short_qa_whatever_the_configured_output_limit() -> None:
    assert _classify("What is the capital of France?") == (
        "short_qa",
        "a short prompt, no length asked",
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Write a short story about a lighthouse keeper.", "asks to write"),
        ("please draft an email to my landlord", "asks to draft"),
        ("Could you generate test data for this schema?", "asks to generate"),
        ("Explain TCP slow start in 800 words.", "asks for 800 words"),
        ("Give me 5 paragraphs on the history of tea.", "asks for 5 paragraphs"),
    ],
)
def test_asking_to_write_or_for_a_length_is_long_generation(text: str, reason: str) -> None:
    assert _classify(text) == ("long_generation", reason)


def test_questions_that_merely_mention_a_verb_or_a_small_length_stay_short() -> None:
    assert _classify("How do I create a virtualenv?")[0] == "short_qa"
    assert _classify("Answer in 2 sentences: why is the sky blue?")[0] == "short_qa"
    assert _classify("Summarise this in 100 words.")[0] == "short_qa"


def test_a_long_prompt_is_long_generation() -> None:
    name, reason = _classify("And the summary?", history=LONG_PROMPT_CHARS // 100 + 1)
    assert name == "long_generation" and reason.startswith("a long prompt (")


def test_an_asked_max_tokens_decides_as_before() -> None:
    assert _classify("Write a poem", max_tokens=200, asked=True) == (
        "short_qa",
        "max_tokens 200 asked",
    )
    assert _classify("Hi", max_tokens=1024, asked=True)[0] == "long_generation"


def test_custom_classes_short_is_the_first_long_follows_the_output_limit() -> None:
    classes = (
        RequestClass("chat", 300.0, 256),
        RequestClass("answer", 800.0, 1024),
        RequestClass("essay", 3000.0),
    )
    messages = [{"role": "user", "content": "Write an essay on rivers"}]
    chosen = classify_request(messages, 2048, False, classes)
    assert chosen is not None and chosen.request_class.name == "essay"
    question = [{"role": "user", "content": "Is it raining?"}]
    chosen = classify_request(question, 2048, False, classes)
    assert chosen is not None and chosen.request_class.name == "chat"
    assert classify_request(question, 2048, False, ()) is None


def test_one_verdict_the_target_is_the_ok_warn_boundary() -> None:
    thresholds = Thresholds(warn_ms=1200.0, error_ms=2500.0)
    short = thresholds.for_target(500.0)
    assert short.level(500.0) is TtftLevel.OK  # met
    assert short.level(800.0) is TtftLevel.WARN  # missed, though under warn_ms
    assert short.level(2500.0) is TtftLevel.ERROR
    long = thresholds.for_target(2000.0)
    assert long.level(1500.0) is TtftLevel.OK  # met, though over warn_ms
    assert long.level(2010.0) is TtftLevel.WARN  # missed
    slow = thresholds.for_target(4000.0)  # a target beyond the error threshold moves it
    assert slow.level(3000.0) is TtftLevel.OK and slow.level(4001.0) is TtftLevel.ERROR
    assert thresholds.for_target(None) is thresholds  # no class: the configured thresholds
