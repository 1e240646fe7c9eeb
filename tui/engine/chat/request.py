"""The chat request as the client sends it: messages, model, switches, and what was counted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui.engine.chat.wire_messages import wire_messages

if TYPE_CHECKING:
    from tui.engine.tokens.trim import TrimResult


@dataclass(frozen=True)
class ChatRequest:
    messages: list[dict[str, Any]]
    model: str
    stream: bool
    temperature: float
    max_tokens: int
    trim: TrimResult | None = None
    prompt_tokens_estimated: int | None = None  # calibrated when the counter has a ratio
    prompt_tokens_exact: bool = False
    # The raw (uncalibrated) count: what calibration compares with usage.prompt_tokens.
    prompt_tokens_counted: int | None = None
    # max_tokens was asked for this request (a flag, `check`), not the config's default: the
    # request class follows it (request_classes.py).
    max_tokens_asked: bool = False
    # Where the prompt's count came from: "estimate" (local), "server_text" (the server's
    # tokenizer per message: server_tokens.py); None when nothing counted it.
    prompt_tokens_source: str | None = None
    # Trimming is on and the conversation fits the budget uncounted: sent whole, nothing dropped.
    trim_fits: bool = False
    # The budget it fits when `trim_fits`: a context overflow is then the budget's fault.
    trim_budget: int | None = None

    def body(self) -> dict[str, Any]:
        """The request body: model, messages, stream, temperature and max_tokens."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": wire_messages(self.messages),
            "stream": self.stream,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        return body
