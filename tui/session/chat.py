"""A chat bound to its history file and to an engine: what the app and `ask` send through.

Every surface takes the same steps for a turn, here once: the user's message saved before it
is sent, the request counted and trimmed, handed to the engine, the reply saved as a draft
while it streams, and at the end the server's count of what was sent, the record and the
reply filed under the chat the request was sent from (even when a surface has moved on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.session.counts import ExactCounts
from tui.session.turn import ReplySink, Turn

if TYPE_CHECKING:
    from tui.engine.chat.events import Finished
    from tui.engine.chat.request import ChatRequest
    from tui.engine.tokens.counter import PromptCounter
    from tui.session.chat_state import ChatState
    from tui.session.engine_link import EngineLink
    from tui.session.history import ChatHistory


class Chat:
    def __init__(self, state: ChatState, history: ChatHistory, engine: EngineLink) -> None:
        self.state = state
        self.history = history
        self.engine = engine
        self.counts = ExactCounts(engine)
        # One lane of a race (session/race.py): (race id, this target's label), marked on
        # every record this chat files.
        self.race: tuple[str, str] | None = None

    # -- a turn ------------------------------------------------------------------------------

    def add_user(self, text: str) -> int:
        """`text` joins the chat as the next user message, saved before anything is sent."""
        index = self.state.add_user(text)
        self.history.message_sent(self.state.messages[index])
        return index

    def request(self, *, count_later: bool = False) -> ChatRequest:
        """The next request: the chat's messages counted and trimmed with the engine's
        counter (the server's counts once it is known to count). With `count_later`, a
        conversation nothing depends on counting (trimming off, or it fits the budget
        whatever the tokenizer) is sent uncounted, its counts filled in after the reply."""
        counter = self.engine.counter
        assert counter is not None, "the engine is open before a request is built"
        return self.state.build_request(counter, count_later=count_later)

    async def exact_request(self, request: ChatRequest) -> ChatRequest:
        """`request`, or the same trimmed with the server's counts when an earlier run found
        its tokenizer and the conversation might exceed the budget."""
        if request.trim is None:
            return request  # trimming is off, or it fits whatever the tokenizer

        def rebuild(counts: PromptCounter) -> ChatRequest:
            return self.state.build_request(counts)

        exact = await self.counts.exact_request(
            self.state.model, self.state.messages, self.state.budget, rebuild
        )
        return exact if exact is not None else request

    def begin(
        self, sink: ReplySink, request: ChatRequest | None = None, *, raw: bool = False
    ) -> Turn:
        """Hand the next request (or `request`) to the engine now; its reply is saved as a
        draft while it streams."""
        client = self.engine.client
        assert client is not None, "the engine is open before a turn begins"
        turn = Turn(
            client,
            request if request is not None else self.request(),
            sink,
            network=self.engine.network,
            raw=raw,
        )
        turn.start()  # the request is on its way before anything else is done
        turn.chat_id = self.state.chat_id
        turn.conversation = self.state.conversation
        turn.draft = self.history.reply_started(turn)
        return turn

    async def settle(self, turn: Turn, finished: Finished, *, server_count: bool = True) -> None:
        """After the reply: the server's count of the prompt that was sent (`server_count`,
        when it has a tokenizer and the request was answered), and the local count of a
        request sent uncounted."""
        self.counts.learn_usage(turn.request, finished)
        if server_count and not turn.cancel_event.is_set():
            await self.counts.count_sent_prompt(finished, turn.request.messages)
        if turn.request.prompt_tokens_counted is None and turn.request.trim is None:
            local = self.counts.local()
            if local is not None:
                from tui.engine.chat.request_builder import fill_prompt_counts

                fill_prompt_counts(finished.record, turn.request.messages, local)

    def file(self, turn: Turn, finished: Finished) -> None:
        """The record (replacing the turn's draft) and the reply, under the chat the request
        was sent from; once, however many ways a surface gets here."""
        if turn.filed:
            return
        turn.filed = True
        if self.race is not None:
            finished.record.race_id, finished.record.race_target = self.race
        self.history.reply_done(
            turn.chat_id,
            finished.record,
            finished.text,
            reasoning=finished.reasoning,
            draft=turn.draft,
        )

    async def stop(self, turn: Turn | None, timeout_s: float = 1.0) -> None:
        """The surface is closing: a reply under way is cancelled, and its record and partial
        text kept, as Esc or Ctrl-C would."""
        if turn is None or turn.filed:
            return
        finished = await turn.stop(timeout_s)
        if finished is not None:
            self.file(turn, finished)

    def sent_from_here(self, turn: Turn) -> bool:
        """Whether the conversation the turn was sent from is still this chat's."""
        return turn.conversation == self.state.conversation

