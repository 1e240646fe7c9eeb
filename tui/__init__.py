"""firsttoken: a terminal chat client for OpenAI-compatible APIs, built around latency."""

__version__ = "0.1.0"
