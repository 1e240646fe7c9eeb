"""The history file's schema, one file per version: each says what it adds to the one before
(version 1 makes the tables). `PRAGMA user_version` says which the file has; the store runs the
ones after it, in one transaction. No comments inside the statements: SQLite keeps an added
column's text in the table's CREATE statement."""

from __future__ import annotations

from tui.engine.store.migrations import (
    v001_first,
    v002_incomplete_replies,
    v003_ttft_phases,
    v004_chat_kinds,
    v005_race_lanes,
    v006_chat_search,
    v007_figure_columns,
)

STEPS: tuple[tuple[str, ...], ...] = tuple(
    step.STATEMENTS
    for step in (
        v001_first,
        v002_incomplete_replies,
        v003_ttft_phases,
        v004_chat_kinds,
        v005_race_lanes,
        v006_chat_search,
        v007_figure_columns,
    )
)
SCHEMA_VERSION = len(STEPS)


def statements_for(version: int) -> tuple[str, ...]:
    """What makes a file of `version - 1` one of `version` (1: the tables themselves)."""
    return STEPS[version - 1]
