"""A race in the app: its screen, the lanes' figures, the scoreboard."""
