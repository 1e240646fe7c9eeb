"""Chat messages as they go on the wire: the one form both OpenAI and llama.cpp's server accept.

An assistant message that calls tools often has `"content": null` (OpenAI's own responses say
so, and conversations saved from them keep it). OpenAI accepts it, but llama-cpp-python's
server answers HTTP 500 with validation errors; without the key it answers 500 too (its chat
formatter reads `content`). An empty string passes both, and llama.cpp's `llama-server` and
vLLM accept it as well, so that is what a null or missing content beside a tool call becomes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _calls_tools(message: dict[str, Any]) -> bool:
    return bool(message.get("tool_calls") or message.get("function_call"))


def wire_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` with an empty string for the null or missing `content` of tool-calling
    assistant messages. The caller's dicts are never changed: a message that needs it is
    copied."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if (
            message.get("role") == "assistant"
            and message.get("content") is None
            and _calls_tools(message)
        ):
            message = {**message, "content": ""}
        out.append(message)
    return out
