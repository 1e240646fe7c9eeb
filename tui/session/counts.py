"""The server's own prompt counts for the budget gauge and the trimmer, when its tokenizer
answers (llama.cpp's `/tokenize`, vLLM's, llama-cpp-python's: tui/engine/tokens/server_counts.py).

The app never speaks HTTP itself: the engine's `ServerTokenizer` asks, over the engine client's
own connection pool, on the engine's network loop; the UI awaits the outcome and shows the
preview again. What the server counted is kept per message (by content), so after the first
count only a changed draft is asked about. Until every message of the next request has the
server's count, the gauge shows the calibrated local estimate with `≈`.

Once the server is known to have a tokenizer, the engine link's counter is a `ServerCounts`
wrapping the local one, so the request that is sent is trimmed by the same counts the gauge
shows. Picking another model puts a local counter back (chat_screen's `_use_counter`); the
next preview wraps it again for the new model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tui.engine.tokens.server_counts import NONE, ServerCounts, ServerTokenizer

if TYPE_CHECKING:
    from textual.app import App

    from tui.app.chat_session import ChatSession, TrimPreview
    from tui.app.start_up import EngineLink
    from tui.engine.tokens.counter import TokenCounter


def candidate_messages(session: ChatSession, draft: str) -> list[dict[str, Any]]:
    """The next request's messages if sent now with `draft`, as the preview counts them."""
    messages = list(session.messages)
    if draft.strip():
        messages.append({"role": "user", "content": draft})
    return messages


class ExactCounts:
    def __init__(self, engine: EngineLink) -> None:
        self.engine = engine
        self._tokenizer: ServerTokenizer | None = None
        self._counts: ServerCounts | None = None

    def _local(self) -> TokenCounter | None:
        counter = self.engine.counter
        if isinstance(counter, ServerCounts):
            return counter.local
        return counter  # type: ignore[return-value]  # a TokenCounter: the only other kind

    def _ready(self, model: str) -> ServerCounts | None:
        """The counts for `model` (made anew when the model or the local counter changed)."""
        local = self._local()
        client = self.engine.client
        if local is None or client is None:
            return None
        tokenizer = self._tokenizer
        if tokenizer is None or tokenizer.model != model or self._counts is None:
            tokenizer = ServerTokenizer(client.post_json, client.base_url, model)
            self._tokenizer = tokenizer
            self._counts = ServerCounts(local)
        elif self._counts.local is not local:
            self._counts = ServerCounts(local)
        known = tokenizer.known
        if known is not None and known.api != NONE:
            self.engine.counter = self._counts
        return self._counts

    def preview(self, session: ChatSession, draft: str) -> TrimPreview | None:
        """The trim preview with the server's counts where it has them; `exact` only when
        every message has the server's count (or the local counter is the model's own)."""
        counts = self._ready(session.model)
        local = self._local()
        if local is None:
            return None
        if counts is None or self.engine.counter is not counts:
            return session.preview(draft, local)
        preview = session.preview(draft, counts)
        exact = counts.known(candidate_messages(session, draft))
        return dataclasses.replace(preview, exact=exact)

    def wanted(self, messages: Sequence[Mapping[str, Any]], may_probe: bool) -> bool:
        """Whether asking the server could make the count of `messages` exact. An endpoint +
        model not probed yet (this run or an earlier one) is probed only when `may_probe`:
        as `ask` does, never before the first request has been answered, so the first
        request never waits behind the probe's requests."""
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
        """Ask the server (on the engine's network loop) to count `messages`; True when every
        one of them has the server's count now."""
        tokenizer, counts = self._tokenizer, self._counts
        if tokenizer is None or counts is None:
            return False
        try:
            await self.engine.network.call(tokenizer.learn(counts, list(messages)))
        except Exception:  # ProbeFailed, ClientError: a count that failed leaves the estimate
            return False
        known = tokenizer.known
        if known is not None and known.api != NONE:
            self.engine.counter = counts
        return counts.known(messages)

    def count_later(
        self,
        app: App[Any],
        session: ChatSession,
        draft: str,
        then: Callable[[], None],
        *,
        may_probe: bool,
    ) -> None:
        """Have the server count the next request's messages, off the UI thread, and call
        `then` (the preview again) once it has counted every one; a newer draft's count
        replaces one still under way (`may_probe`: see `wanted`)."""
        messages = candidate_messages(session, draft)
        if not self.wanted(messages, may_probe):
            return

        async def count() -> None:
            if await self.learn(messages):
                then()

        # The function, not a coroutine: a worker cancelled before it starts never makes one
        # (Textual types an async function's coroutine as Coroutine[None, None, T]).
        app.run_worker(
            count,  # type: ignore[arg-type]
            group="exact-counts",
            exclusive=True,
            exit_on_error=False,
        )
