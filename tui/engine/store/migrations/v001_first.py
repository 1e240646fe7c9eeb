"""Version 1: chats, their messages, and one record per request with its reply text (the
record's JSON is every field of RequestRecord.to_dict(), the source of truth; the columns beside
it are for queries)."""

VERSION = 1
STATEMENTS = (
    "CREATE TABLE chats ("
    " id INTEGER PRIMARY KEY,"
    " title TEXT NOT NULL,"
    " model TEXT NOT NULL,"
    " created_at_epoch REAL NOT NULL)",
    "CREATE TABLE messages ("
    " id INTEGER PRIMARY KEY,"
    " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
    " position INTEGER NOT NULL,"
    " role TEXT NOT NULL,"
    " json TEXT NOT NULL,"
    " UNIQUE (chat_id, position))",
    "CREATE TABLE records ("
    " id TEXT PRIMARY KEY,"
    " chat_id INTEGER REFERENCES chats(id) ON DELETE SET NULL,"
    " started_at_epoch REAL NOT NULL,"
    " model TEXT NOT NULL,"
    " endpoint_host TEXT NOT NULL,"
    " status TEXT NOT NULL,"
    " error_kind TEXT,"
    " streamed INTEGER NOT NULL,"
    " simulated INTEGER NOT NULL,"
    " trim_enabled INTEGER NOT NULL,"
    " ttft_ms REAL,"
    " total_ms REAL,"
    " tpot_ms REAL,"
    " output_tokens INTEGER,"
    " prompt_tokens_estimated INTEGER,"
    " record_json TEXT NOT NULL,"
    " reply_text TEXT NOT NULL)",
    "CREATE INDEX records_by_time ON records (started_at_epoch)",
    "CREATE INDEX records_by_chat ON records (chat_id, started_at_epoch)",
)
