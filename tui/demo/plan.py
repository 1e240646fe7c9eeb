"""What a chat request is answered with: thinking, answer and finish reason, decided up front.

A reply without a requested length ends at a sentence within the preset's `reply_tokens`;
"reply N tokens" gets exactly N (it may stop mid-sentence: it was asked for). Thinking and
answer share the request's token limit (`max_completion_tokens` or `max_tokens`), as on real
servers, and a reply the limit cuts ends with finish reason "length".
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.demo.model_kinds import ModelKind
from tui.demo.reply import (
    ReplySummary,
    natural_reply,
    reasoning_tokens,
    reply_tokens,
    requested_length,
    requested_thinking,
)


@dataclass(frozen=True)
class ReplyPlan:
    reasoning: list[str]  # thinking sent before the answer (in `reasoning_field`)
    reasoning_field: str | None
    hidden_reasoning: int  # thinking tokens decoded, counted, never sent
    content: list[str]
    finish_reason: str

    @property
    def tokens(self) -> list[str]:
        """Everything sent, in order: thinking first, then the answer."""
        return self.reasoning + self.content

    @property
    def reasoning_total(self) -> int:
        return len(self.reasoning) + self.hidden_reasoning


def plan_reply(
    summary: ReplySummary, kind: ModelKind, default_length: int, limit: int | None
) -> ReplyPlan:
    messages = summary.messages
    thinking: list[str] = []
    if kind.reasoning_field is not None or kind.hidden_reasoning:
        thinking = reasoning_tokens(summary, requested_thinking(messages))
    wanted = requested_length(messages)
    if wanted is None:
        content = natural_reply(summary, default_length)
    else:
        content = reply_tokens(summary, wanted)
    finish = "stop"
    if limit is not None and limit < len(thinking) + len(content):
        finish = "length"
        thinking = thinking[:limit]
        content = content[: limit - len(thinking)]
    if kind.hidden_reasoning:
        return ReplyPlan([], None, len(thinking), content, finish)
    return ReplyPlan(thinking, kind.reasoning_field, 0, content, finish)
