"""A reasoning model's thinking kept with its reply, and kept out of later requests.

The thinking streams as `reasoning_content` (llama.cpp, vLLM, DeepSeek) or `reasoning`
(OpenRouter) and is stored with the reply's message under `reasoning_content`, so a saved chat
shows it again. It is not sent back: DeepSeek answers 400 to `reasoning_content` in an input
message, and other providers ignore it or bill it as prompt. `without_reasoning` drops it from
every message a request is built from (request_builder.py); a provider that wants it back
would be sent the messages unchanged (`keep=True`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

REASONING_KEY = "reasoning_content"
# Every field a stored or pasted assistant message may carry its thinking in.
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")


def assistant_message(text: str, reasoning: str = "") -> dict[str, Any]:
    """The reply as a chat message, its thinking beside it when there was any."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning:
        message[REASONING_KEY] = reasoning
    return message


def without_reasoning(
    messages: Sequence[dict[str, Any]], keep: bool = False
) -> list[dict[str, Any]]:
    """`messages` as a request sends them: assistant messages without their thinking (copies
    of only those that had any; the others are the caller's own dicts)."""
    if keep:
        return list(messages)
    sent = []
    for message in messages:
        if message.get("role") == "assistant" and (
            "reasoning_content" in message
            or "reasoning" in message
            or "reasoning_details" in message
        ):
            message = {k: v for k, v in message.items() if k not in REASONING_FIELDS}
        sent.append(message)
    return sent
