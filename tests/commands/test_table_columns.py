"""The plain-text tables `bench`, `sweep`, `check` and `history` print: each column's cells
line up with its header, words to the left and figures to the right."""

from __future__ import annotations

import re

from tui.commands.bench_output import table
from tui.commands.history import chat_lines


def test_words_to_the_left_and_figures_to_the_right() -> None:
    lines = table(
        ["chat", "model", "messages"],
        [["2", "gpt-4o-mini", "62"], ["11", "qwen", "1,162"]],
        words=(1,),
    )
    assert lines == [
        "chat  model        messages",
        "   2  gpt-4o-mini        62",
        "  11  qwen            1,162",
    ]


def test_chats_table_headers_start_where_their_words_do() -> None:
    header, row = chat_lines(
        [
            {
                "id": 7,
                "kind": "ask",
                "created_at_epoch": 0.0,
                "last_used_epoch": 0.0,
                "model": "gpt-4o-mini",
                "endpoint_host": "api.example.com:443",
                "message_count": 162,
                "title": "hello from a long chat",
            }
        ]
    )
    date = re.search(r"\d{4}-\d\d-\d\d", row)
    assert date is not None
    assert header.index("last used") == date.start(), (header, row)
    assert header.index("kind") == row.index("ask"), (header, row)
    assert header.index("endpoint") == row.index("api.example.com"), (header, row)
    assert header.index("title") == row.index("hello from"), (header, row)
    assert header.index("messages") + len("messages") == row.index("162") + len("162")


def test_a_long_cell_is_cut_and_cannot_widen_the_other_rows() -> None:
    lines = table(["model", "out"], [["m" * 5_000, "1"], ["short", "22"]])
    assert max(len(line) for line in lines) < 70
    assert lines[1].startswith("m" * 59 + "…")
