"""Version 6: every message's text searchable (SQLite FTS5). A message added is indexed by the
store as it is written (database.py: `_index_message`); triggers keep the index in step when a
message is changed or removed (a chat deleted removes its messages). The index reads the text
through a view, so it keeps no second copy of it; an existing history's messages are indexed as
the file is migrated."""

VERSION = 6
_TEXT = "COALESCE(json_extract({0}.json, '$.content'), '')"
STATEMENTS = (
    "CREATE VIEW message_text AS SELECT id, " + _TEXT.format("messages") + " AS text FROM messages",
    "CREATE VIRTUAL TABLE message_search USING fts5("
    "text, content='message_text', content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    "INSERT INTO message_search (message_search) VALUES ('rebuild')",
    "CREATE TRIGGER message_search_removed AFTER DELETE ON messages BEGIN"
    " INSERT INTO message_search (message_search, rowid, text)"
    " VALUES ('delete', old.id, " + _TEXT.format("old") + ");"
    " END",
    "CREATE TRIGGER message_search_changed AFTER UPDATE ON messages BEGIN"
    " INSERT INTO message_search (message_search, rowid, text)"
    " VALUES ('delete', old.id, " + _TEXT.format("old") + ");"
    " INSERT INTO message_search (rowid, text) VALUES (new.id, " + _TEXT.format("new") + ");"
    " END",
)
