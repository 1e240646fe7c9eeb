"""The latency panel: its widgets and the figures it shows."""
