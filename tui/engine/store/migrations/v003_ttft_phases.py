"""Version 3: where TTFT went (RequestRecord.phases_ms as a JSON object in phase order, and
connection_reused) in columns of their own for queries; record_json has them too."""

VERSION = 3
STATEMENTS = (
    "ALTER TABLE records ADD COLUMN connection_reused INTEGER",
    "ALTER TABLE records ADD COLUMN phases_json TEXT",
)
