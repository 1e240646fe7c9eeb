"""The server's own prompt counts, where its tokenizer answers (llama.cpp's `/tokenize`,
vLLM's, llama-cpp-python's: tui/engine/tokens/server_counts.py), for every surface.

What the server counted is kept per message (by content), so after the first count only a
changed message is asked about. Once the server is known to have a tokenizer, the engine
link's counter is a `ServerCounts` wrapping the local one, so a request is trimmed by the same
counts the app's gauge shows; until every message of the next request has the server's count,
the calibrated local estimate is shown with `≈`.

The server is never asked before a request: its tokenizer is probed once a request has been
answered (this run or an earlier one), so the first request never waits behind the probe's
requests. After a reply the server counts the prompt that was sent, for the record.
Everything here runs on the engine's network loop when there is one (the app's), else on the
caller's loop (`ask`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tui.engine.tokens.server_counts import (
    NONE,
    SERVER_TEXT,
    ServerCounts,
    ServerTokenizer,
    might_exceed,
    server_calibration,
)
from tui.session.network import run_on

if TYPE_CHECKING:
    from tui.engine.chat.events import Finished
    from tui.engine.chat.request import ChatRequest
    from tui.engine.tokens.counter import TokenCounter
    from tui.session.chat_state import ChatState, TrimPreview
    from tui.session.engine_link import EngineLink


def candidate_messages(state: ChatState, draft: str) -> list[dict[str, Any]]:
    """The next request's messages if sent now with `draft`, as the preview counts them."""
    messages = list(state.messages)
    if draft.strip():
        messages.append({"role": "user", "content": draft})
    return messages


class ExactCounts:
    def __init__(self, engine: EngineLink) -> None:
        self.engine = engine
        self._tokenizer: ServerTokenizer | None = None
        self._counts: ServerCounts | None = None

    def local(self) -> TokenCounter | None:
        """The local counter under the server's counts."""
        counter = self.engine.counter
        if isinstance(counter, ServerCounts):
            return counter.local
        return counter  # type: ignore[return-value]  # a TokenCounter: the only other kind

    def ready(self, model: str) -> ServerCounts | None:
        """The counts for `model` (made anew when the model or the local counter changed);
        once the server is known to count, the engine link counts with them."""
        local = self.local()
        client = self.engine.client
        if local is None or client is None:
            return None
        tokenizer = self._tokenizer
        if tokenizer is None or tokenizer.model != model or self._counts is None:
            tokenizer = ServerTokenizer(client.post_json, client.base_url, model)
            self._tokenizer = tokenizer
            self._counts = ServerCounts(local, server_calibration(client.base_url, model))
        elif self._counts.local is not local:
            self._counts = ServerCounts(local, self._counts.calibration)
        known = tokenizer.known
        if known is not None and known.api != NONE:
            self.engine.counter = self._counts
        return self._counts

    def preview(self, state: ChatState, draft: str) -> TrimPreview | None:
        """The trim preview with the server's counts where it has them; `exact` only when
        every message has the server's count (or the local counter is the model's own)."""
        counts = self.ready(state.model)
        local = self.local()
        if local is None:
            return None
        if counts is None or self.engine.counter is not counts:
            return state.preview(draft, local)
        preview = state.preview(draft, counts)
        # Exact only as the server's count of the templated prompt, never contradicted by its
        # usage since: otherwise an estimate (≈), corrected by what usage said.
        exact = counts.known(candidate_messages(state, draft)) and counts.exact
        return dataclasses.replace(
            preview,
            exact=exact,
            tokens_before=counts.calibrated(preview.tokens_before),
            tokens_after=counts.calibrated(preview.tokens_after),
        )

    def learn_usage(self, request: ChatRequest, finished: Finished) -> None:
        """The server's usage of a request counted with its own tokenizer: learnt, so the
        next count of this endpoint and model follows it (the local estimate learns in the
        engine, tokens/counter.py)."""
        counts, usage = self._counts, finished.record.prompt_tokens_usage
        counted = request.prompt_tokens_counted
        if counts is None or usage is None or counted is None:
            return
        if request.prompt_tokens_source == SERVER_TEXT:
            counts.record_usage(counted, usage)

    def wanted(self, messages: Sequence[Mapping[str, Any]], may_probe: bool) -> bool:
        """Whether asking the server could make the count of `messages` exact. An endpoint +
        model not probed yet (this run or an earlier one) is probed only when `may_probe`:
        never before the first request has been answered."""
        tokenizer, counts = self._tokenizer, self._counts
        if tokenizer is None or counts is None or not self.engine.connected:
            return False
        known = tokenizer.known
        if known is None and not may_probe:
            return False
        if known is not None and known.api == NONE:
            return False
        return not counts.known(messages)

    async def learn(self, messages: Sequence[Mapping[str, Any]]) -> bool:
        """Ask the server to count `messages`; True when every one of them has the server's
        count now."""
        tokenizer, counts = self._tokenizer, self._counts
        if tokenizer is None or counts is None:
            return False
        try:
            await run_on(self.engine.network, tokenizer.learn(counts, list(messages)))
        except Exception:  # ProbeFailed, ClientError: a count that failed leaves the estimate
            return False
        known = tokenizer.known
        if known is not None and known.api != NONE:
            self.engine.counter = counts
        return counts.known(messages)

    async def exact_request(
        self,
        model: str,
        messages: Sequence[Mapping[str, Any]],
        budget: int,
        rebuild: Callable[[ServerCounts], ChatRequest],
    ) -> ChatRequest | None:
        """The request trimmed with the server's counts, when an earlier run found the
        server's tokenizer and the conversation might exceed `budget` (its UTF-8 size, which
        bounds its token count, is over it); None to send the one built with local counts."""
        counts = self.ready(model)
        tokenizer = self._tokenizer
        known = tokenizer.known if tokenizer is not None else None
        if counts is None or known is None or known.api == NONE:
            return None
        if not might_exceed(messages, budget, known.framing, known.priming):
            return None
        if not await self.learn(messages):
            return None
        return rebuild(counts)

    async def count_sent_prompt(
        self, finished: Finished, sent: Sequence[Mapping[str, Any]]
    ) -> None:
        """The server's count of the prompt that was `sent`, into the record (when it has a
        tokenizer: the first time an endpoint + model is seen, this is when it is probed)."""
        record = finished.record
        if record.ttfb_ms is None:  # the server never answered: nothing to ask it
            return
        self.ready(record.model)
        tokenizer = self._tokenizer
        if tokenizer is None:
            return
        known = tokenizer.known
        if known is not None and known.api == NONE:
            return
        try:
            counted = await run_on(self.engine.network, tokenizer.count_prompt(list(sent)))
        except Exception:  # a count that failed is left out, never an error of the request
            return
        if counted is not None:
            record.prompt_tokens_server, record.prompt_tokens_source = counted
            counts, usage = self._counts, record.prompt_tokens_usage
            if counts is not None and usage is not None and counted[1] == SERVER_TEXT:
                counts.record_usage(counted[0], usage)  # its template's tokens were guessed
