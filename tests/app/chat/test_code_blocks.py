"""Code block extraction for "copy the last code block"."""

from __future__ import annotations

import pytest

from tui.app.chat.code_blocks import code_blocks, last_code_block


def test_no_code_block() -> None:
    assert code_blocks("Just prose, with `inline code`.") == []
    assert last_code_block("Just prose.") is None
    assert last_code_block("") is None


def test_language_and_plain_fences() -> None:
    text = "Intro\n```python\nprint(1)\n```\nMiddle\n```\nplain\n  indented\n```\nEnd\n"
    assert code_blocks(text) == ["print(1)", "plain\n  indented"]
    assert last_code_block(text) == "plain\n  indented"


def test_tilde_fences_may_contain_backtick_fences() -> None:
    text = "~~~markdown\n```py\nx = 1\n```\n~~~\n"
    assert code_blocks(text) == ["```py\nx = 1\n```"]


def test_longer_fence_needs_an_equally_long_close() -> None:
    text = "````\n```\ninner\n```\n````\n"
    assert code_blocks(text) == ["```\ninner\n```"]


def test_unterminated_final_fence_counts() -> None:
    text = "Here:\n```bash\npip install firsttoken\nfirsttoken ask 'hi'"
    assert last_code_block(text) == "pip install firsttoken\nfirsttoken ask 'hi'"


def test_fence_inside_a_list_item_is_dedented() -> None:
    text = "1. Install:\n\n   ```sh\n   pip install x\n     --upgrade\n   ```\n"
    assert code_blocks(text) == ["pip install x\n  --upgrade"]


def test_empty_blocks_are_listed_but_not_the_last_block() -> None:
    text = "```\nfirst\n```\n\n```\n\n```\n"
    assert code_blocks(text) == ["first", ""]
    assert last_code_block(text) == "first"


@pytest.mark.parametrize("text", ["```inline``` code", "text ``` not at the start"])
def test_things_that_are_not_fences(text: str) -> None:
    assert code_blocks(text) == []


def test_blank_lines_inside_a_block_are_kept() -> None:
    assert code_blocks("```\na\n\nb\n```") == ["a\n\nb"]
