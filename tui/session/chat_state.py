"""A chat's state: the messages, the switches, the trim preview and send bookkeeping.

The engine's trimmer and token counter are imported lazily (tiktoken's vocabulary is loaded off
the UI thread by the app's warm-up), so importing this module costs nothing at start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.config import Config
    from tui.engine.chat.request import ChatRequest
    from tui.engine.tokens.counter import PromptCounter

BUDGET_STEP = 500
MIN_BUDGET = 500

ReplyNote = tuple[str, str]  # (model, the record's figures) of a reply


@dataclass(frozen=True)
class TrimPreview:
    """What the next request would carry if sent now with `draft` as the latest user message."""

    tokens_before: int
    tokens_after: int
    budget: int
    exact: bool
    trimming: bool
    dropped_indices: frozenset[int]  # indices into ChatState.messages
    dropped_tokens: int
    over_budget: bool


@dataclass
class ChatState:
    config: Config
    model: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    model_source: str = "configured"  # where `model` came from (the app's chat/model_choice.py)
    trim_enabled: bool = True
    streaming: bool = True
    budget: int = 0
    chat_id: int | None = None  # the Store's chat, created on the first send
    # Counts conversations: a reply still arriving for an earlier one must not join this one.
    conversation: int = 0
    # What each reply's block shows beside it (model, figures), by message index: the chat
    # shown again (a new system prompt) keeps them as they were when the reply arrived.
    reply_notes: dict[int, ReplyNote] = field(default_factory=dict)
    # At most this many output tokens, asked for (`ask --max-tokens`): the request's class
    # follows it. None: the configured limit, sent with every request.
    max_tokens: int | None = None
    # Every request goes cold: a fresh tag opens its prompt (as `bench` does), so no server's
    # prefix cache serves part of it (a race's rounds, unless asked to go warm).
    cold: bool = False

    @classmethod
    def from_config(
        cls, config: Config, messages: list[dict[str, Any]] | None = None
    ) -> ChatState:
        return cls(
            config=config,
            model=config.model,
            messages=list(messages or []),
            trim_enabled=config.trim_enabled_by_default,
            streaming=config.streaming,
            budget=config.token_budget,
        )

    @property
    def strategy(self) -> str:
        # With strategy "none" in the config, switching trimming on uses the default strategy.
        return self.config.trim_strategy if self.config.trim_strategy != "none" else "priority"

    def start_over(
        self, messages: list[dict[str, Any]], reply_notes: dict[int, ReplyNote] | None = None
    ) -> None:
        """Another conversation (a new chat, a loaded or reopened one), not saved yet."""
        self.messages = list(messages)
        self.reply_notes = dict(reply_notes or {})
        self.chat_id = None
        self.conversation += 1

    def new_chat_start(self, counter: PromptCounter | None) -> tuple[list[dict[str, Any]], str]:
        """What a new chat starts with, and the line that says so: this chat's system prompt
        is kept (the user chose it), unless it is the bloated sample's, which belongs to the
        trimming demo and would make every request of the new chat 1,400 tokens longer."""
        system = self.system_prompt
        if not system:
            return [], "new chat"
        from tui.sample_conversation import sample_system_prompt

        if system == sample_system_prompt():
            return [], "new chat, started clean: the sample's system prompt is not kept"
        kept = [{"role": "system", "content": system}]
        size = f" ({counter.count_messages(kept):,} tokens)" if counter is not None else ""
        return kept, f"new chat: the system prompt is kept{size}; f9 changes or clears it"

    def change_budget(self, steps: int) -> None:
        self.budget = max(MIN_BUDGET, self.budget + steps * BUDGET_STEP)

    # -- the system prompt ----------------------------------------------------------------

    @property
    def system_prompt(self) -> str | None:
        if self.messages and self.messages[0].get("role") == "system":
            return str(self.messages[0].get("content") or "")
        return None

    def set_system_prompt(self, text: str) -> None:
        """Replace (or insert, or with "" remove) the leading system message."""
        has = bool(self.messages) and self.messages[0].get("role") == "system"
        if text and has:
            self.messages[0] = {"role": "system", "content": text}
        elif text:
            self.messages.insert(0, {"role": "system", "content": text})
            self._shift_notes(+1)
        elif has:
            del self.messages[0]
            self._shift_notes(-1)

    def _shift_notes(self, by: int) -> None:
        self.reply_notes = {index + by: note for index, note in self.reply_notes.items()}

    # -- trimming ----------------------------------------------------------------------------

    def _policy(self) -> Any:
        from dataclasses import replace

        policy = self.config.trim_policy()
        if policy.strategy == "none":
            policy = replace(policy, strategy="priority")
        return policy

    def preview(self, draft: str, counter: PromptCounter) -> TrimPreview:
        """Trim (or count) the messages plus the draft exactly as the next send would."""
        from tui.engine.tokens.trim import trim

        candidate = list(self.messages)
        if draft.strip():
            candidate.append({"role": "user", "content": draft})
        if not self.trim_enabled:
            total = counter.count_messages(candidate)
            return TrimPreview(
                tokens_before=total,
                tokens_after=total,
                budget=self.budget,
                exact=counter.exact,
                trimming=False,
                dropped_indices=frozenset(),
                dropped_tokens=0,
                over_budget=total > self.budget,
            )
        result = trim(candidate, self.budget, self._policy(), counter)
        dropped = frozenset(d.index for d in result.dropped if d.index < len(self.messages))
        return TrimPreview(
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
            budget=self.budget,
            exact=counter.exact,
            trimming=True,
            dropped_indices=dropped,
            dropped_tokens=result.tokens_before - result.tokens_after,
            over_budget=result.over_budget,
        )

    # -- sending -----------------------------------------------------------------------------

    def add_user(self, text: str) -> int:
        self.messages.append({"role": "user", "content": text})
        return len(self.messages) - 1

    def add_assistant(self, text: str, reasoning: str = "", note: ReplyNote | None = None) -> int:
        """The reply joins the chat, its thinking beside it (shown again with the chat, never
        sent back: the request builder leaves it out)."""
        from tui.engine.chat.reasoning import assistant_message

        self.messages.append(assistant_message(text, reasoning))
        index = len(self.messages) - 1
        if note is not None:
            self.reply_notes[index] = note
        return index

    def build_request(self, counter: PromptCounter, *, count_later: bool = False) -> ChatRequest:
        """The request for the current messages, with this chat's switches, model and budget.
        With `count_later` a conversation nothing depends on counting (trimming off, or it
        fits the budget whatever the tokenizer) is sent without counting it first."""
        from dataclasses import replace

        from tui.engine.chat.request_builder import build_request, uncounted_request
        from tui.wiring import request_settings

        settings = request_settings(self.config)
        if settings.trim_policy.strategy == "none" and self.trim_enabled:
            # Trimming switched on in a chat configured without it: the default strategy.
            policy = replace(settings.trim_policy, strategy="priority")
            settings = replace(settings, trim_policy=policy)
        messages = self.messages
        if self.cold or self.holds_the_sample():
            # The trimming demo compares two sends, and a race its targets: each goes cold (a
            # fresh tag opens the prompt, as `bench` does), so the server's prefix cache cannot
            # make one order look better.
            from tui.engine.bench import new_tag, tagged

            tag = f"sample {new_tag()}" if self.holds_the_sample() else new_tag()
            messages = tagged(messages, tag)
        if count_later and self._fits_uncounted(messages):
            request = uncounted_request(
                messages,
                model=self.model,
                temperature=settings.temperature,
                max_tokens=settings.max_tokens,
                stream=self.streaming,
                trim_enabled=self.trim_enabled,
                budget=self.budget,
            )
        else:
            request = build_request(
                messages,
                settings,
                counter,
                trim_enabled=self.trim_enabled,
                stream=self.streaming,
                model=self.model,
                budget=self.budget,
            )
        if self.max_tokens is not None:
            request = replace(request, max_tokens=self.max_tokens, max_tokens_asked=True)
        return request

    def _fits_uncounted(self, messages: list[dict[str, Any]]) -> bool:
        from tui.engine.tokens.prompt_bound import fits_without_counting

        return not self.trim_enabled or fits_without_counting(messages, self.budget)

    def holds_the_sample(self) -> bool:
        """Whether this chat is F6's bloated sample (its system prompt opens it)."""
        from tui.sample_conversation import sample_system_prompt

        first = self.messages[0] if self.messages else {}
        return first.get("role") == "system" and first.get("content") == sample_system_prompt()

    def awaiting_reply(self) -> bool:
        """Whether the conversation ends with a user message nobody has answered yet."""
        return bool(self.messages) and self.messages[-1].get("role") == "user"

    def drop_last_reply(self) -> str | None:
        """For retry: remove the trailing assistant reply; the last user prompt, if any."""
        if self.messages and self.messages[-1].get("role") == "assistant":
            self.messages.pop()
            self.reply_notes.pop(len(self.messages), None)
        if self.messages and self.messages[-1].get("role") == "user":
            return str(self.messages[-1].get("content") or "")
        return None
