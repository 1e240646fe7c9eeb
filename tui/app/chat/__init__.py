"""The chat pane: its widgets (the log, messages, the prompt) and the turn shown in them."""
