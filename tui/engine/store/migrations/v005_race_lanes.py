"""Version 5: a race's chat keeps every target's reply to one prompt. A message belongs to a
lane of its chat (0 for every chat before, and for any chat that is not a race), so the unique
position is per lane: SQLite cannot change a table's UNIQUE constraint, so the table is made
again and every row copied. A race's lanes are named by its targets' labels, and its records
carry the race's id in a column of their own for queries (record_json has it too)."""

VERSION = 5
STATEMENTS = (
    "CREATE TABLE messages_v5 ("
    " id INTEGER PRIMARY KEY,"
    " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
    " lane INTEGER NOT NULL DEFAULT 0,"
    " position INTEGER NOT NULL,"
    " role TEXT NOT NULL,"
    " json TEXT NOT NULL,"
    " UNIQUE (chat_id, lane, position))",
    "INSERT INTO messages_v5 (id, chat_id, lane, position, role, json)"
    " SELECT id, chat_id, 0, position, role, json FROM messages",
    "DROP TABLE messages",
    "ALTER TABLE messages_v5 RENAME TO messages",
    "CREATE TABLE lanes ("
    " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
    " lane INTEGER NOT NULL,"
    " label TEXT NOT NULL,"
    " PRIMARY KEY (chat_id, lane))",
    "ALTER TABLE records ADD COLUMN race_id TEXT",
    "CREATE INDEX records_by_race ON records (race_id)",
)
