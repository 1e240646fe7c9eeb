"""The bound `ask` decides trimming with before loading a tokenizer is never below the count:
random conversations (any text, CJK, emoji, names, tool calls, content parts) counted with the
real vocabulary and with the character estimate."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.engine.tokens.counter import TokenCounter
from tui.engine.tokens.prompt_bound import fits_without_counting, prompt_bound
from tui.engine.tokens.vocabulary import CHARS_ESTIMATE, Vocabulary, estimate_chars

PROPERTY = settings(
    derandomize=True,
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow],
)

TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
        st.sampled_from(list("the quick brown fox 你好世界 🙂 <|endoftext|> \n\t")),
    ),
    max_size=60,
)
PART = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}),
    st.just({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}),
    st.fixed_dictionaries({"type": st.just("input_audio"), "data": TEXT}),
)
CALL = st.fixed_dictionaries(
    {"id": st.just("c1"), "function": st.fixed_dictionaries({"name": TEXT, "arguments": TEXT})}
)
MESSAGE = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["system", "user", "assistant", "tool", "développeur"]),
        "content": st.one_of(TEXT, st.none(), st.lists(PART, max_size=3), st.integers()),
    },
    optional={"name": TEXT, "tool_calls": st.lists(CALL, max_size=2)},
)
COUNTER = TokenCounter("gpt-4o-mini")


def estimate_counter() -> TokenCounter:
    counter = TokenCounter("some-local-model")
    counter._vocabulary = Vocabulary(CHARS_ESTIMATE, estimate_chars, False, "")
    return counter


ESTIMATE = estimate_counter()


@PROPERTY
@given(st.lists(MESSAGE, max_size=6))
def test_the_bound_is_never_below_the_count(messages: list[dict]) -> None:
    bound = prompt_bound(messages)
    assert bound >= COUNTER.count_messages(messages)
    assert bound >= ESTIMATE.count_messages(messages)


def test_a_conversation_fits_only_when_its_bound_does() -> None:
    short = [{"role": "user", "content": "hi"}]
    assert prompt_bound(short) == 3 + 4 + 2 + 3  # framing + "user" + "hi" + priming
    assert fits_without_counting(short, 12) and not fits_without_counting(short, 11)
