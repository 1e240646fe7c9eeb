"""Version 4: who made a chat (the app, or a one-shot `ask`), and when it was last used (a
message or a record added). A chat from before is an app chat, last used at its latest record."""

VERSION = 4
STATEMENTS = (
    "ALTER TABLE chats ADD COLUMN kind TEXT NOT NULL DEFAULT 'app'",
    "ALTER TABLE chats ADD COLUMN last_used_epoch REAL NOT NULL DEFAULT 0",
    "UPDATE chats SET last_used_epoch = MAX(created_at_epoch, COALESCE("
    "(SELECT MAX(r.started_at_epoch) FROM records r WHERE r.chat_id = chats.id), 0))",
    "CREATE INDEX chats_by_last_use ON chats (last_used_epoch)",
)
