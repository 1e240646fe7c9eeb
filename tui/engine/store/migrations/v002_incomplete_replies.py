"""Version 2: a reply saved while it streamed, not yet finished (or cut off by a kill)."""

VERSION = 2
STATEMENTS = ("ALTER TABLE records ADD COLUMN incomplete INTEGER NOT NULL DEFAULT 0",)
