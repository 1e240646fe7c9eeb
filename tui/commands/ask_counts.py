"""`ask`'s exact prompt counts from the server's own tokenizer (tui/engine/tokens/server_counts.py),
without delaying the request.

Before the request: only when trimming is on, the conversation might exceed the budget (its
UTF-8 size, which bounds its token count, is over it) and an earlier run found the server's
tokenizer; then the trimmer decides with the server's counts. After the reply: the server
counts the prompt that was sent, for the record and the summary (the first time an endpoint +
model is seen, this is also when its tokenizer is probed). A count that fails is left out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from tui.engine.tokens.server_counts import NONE, ServerCounts, ServerTokenizer, might_exceed

if TYPE_CHECKING:
    from tui.engine.chat.client import ChatClient
    from tui.engine.chat.events import Finished
    from tui.engine.chat.request import ChatRequest
    from tui.engine.tokens.counter import TokenCounter

T = TypeVar("T")


async def unless_cancelled(cancel: asyncio.Event, work: Awaitable[T]) -> T | None:
    """`work`'s result, or None as soon as `cancel` is set (Ctrl-C must not wait on a count)."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait((task, waiter), return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if not task.done():
        task.cancel()
        return None
    try:
        return task.result()
    except Exception:  # a count that failed is left out, never an error of the request
        return None


def tokenizer_for(client: ChatClient, model: str) -> ServerTokenizer:
    return ServerTokenizer(client.post_json, client.base_url, model)


async def exact_trim(
    tokenizer: ServerTokenizer,
    counter: TokenCounter,
    messages: Sequence[Mapping[str, Any]],
    budget: int,
    rebuild: Callable[[ServerCounts], ChatRequest],
) -> ChatRequest | None:
    """The request trimmed with the server's counts, when that is worth a request before
    sending (see the module docstring); None to send the one built with local counts."""
    known = tokenizer.known
    if known is None or known.api == NONE:
        return None
    if not might_exceed(messages, budget, known.framing, known.priming):
        return None
    counts = ServerCounts(counter)
    if not await tokenizer.learn(counts, messages):
        return None
    return rebuild(counts)


async def count_sent_prompt(
    tokenizer: ServerTokenizer, finished: Finished, sent: Sequence[Mapping[str, Any]]
) -> None:
    """The server's count of the prompt that was `sent`, into the record (when it has one)."""
    record = finished.record
    if record.ttfb_ms is None:  # the server never answered: nothing to ask it
        return
    known = tokenizer.known
    if known is not None and known.api == NONE:
        return
    counted = await tokenizer.count_prompt(sent)
    if counted is not None:
        record.prompt_tokens_server, record.prompt_tokens_source = counted
