"""What a turn's figures are read from: the receipt times the engine stamped, as they come."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.engine.chat.events import Finished, PromptProgress


@dataclass(slots=True)
class RunState:
    """Receipt times (perf_counter seconds) the engine stamped; never render times."""

    sent_at: float  # when the turn handed the request over (the live counter's zero until
    #                 the engine's own RequestStarted arrives)
    started_at: float | None = None
    first_byte_at: float | None = None
    first_token_at: float | None = None
    last_token_at: float | None = None
    tokens: int = 0  # chunks carrying a token (one each, as most servers stream them)
    retries: int = 0
    retry_reason: str | None = None
    usage_prompt_tokens: int | None = None
    finished: Finished | None = None
    # The thinking's deltas as they came (only appended, on the network side): the app's
    # reasoning block reads them a few times a second.
    reasoning: list[str] = field(default_factory=list)
    # The answer's first token (after any reasoning), and the last pause the engine saw (it is
    # over once a token arrived after `paused_at`).
    first_answer_at: float | None = None
    paused_since: float | None = None
    paused_at: float | None = None
    # The server's latest progress through the prompt (llama.cpp's prompt_progress), while the
    # first token is awaited.
    prefill: PromptProgress | None = None
