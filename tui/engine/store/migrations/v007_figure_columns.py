"""Version 7: the record figures statistics read, as columns beside the record's JSON (which
stays the source of truth): `stats` over 100,000 records reads plain columns instead of
parsing every record. An existing history's records are filled from their JSON as the file is
migrated."""

VERSION = 7
FIGURES = (
    ("time_to_first_answer_ms", "REAL", "$.time_to_first_answer_ms"),
    ("target_met", "INTEGER", "$.target_met"),
    ("prompt_tokens_usage", "INTEGER", "$.prompt_tokens_usage"),
    ("cached_tokens", "INTEGER", "$.server.cached_tokens"),
)
FILL = "UPDATE records SET " + ", ".join(
    f"{name} = json_extract(record_json, '{path}')" for name, _, path in FIGURES
)
STATEMENTS = (
    *(f"ALTER TABLE records ADD COLUMN {name} {kind}" for name, kind, _ in FIGURES),
    FILL,
)
