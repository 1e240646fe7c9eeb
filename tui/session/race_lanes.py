"""A race's lanes made from its targets (tui/race_targets.py): one chat per target, on the
endpoint its config names, every distinct endpoint opened once (targets on the embedded demo
share one demo server; a target on the endpoint already open reuses it and its connections).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from contextlib import ExitStack, nullcontext
from typing import TYPE_CHECKING, Any

from tui.session.race import Lane

if TYPE_CHECKING:
    from tui.config import Config
    from tui.race_targets import RaceTarget
    from tui.session.chat_state import ChatState
    from tui.session.history import ChatHistory
    from tui.session.network import NetworkLoop
    from tui.wiring import Endpoint

EndpointKey = tuple[bool, str | None, str | None]


def endpoint_key(config: Config) -> EndpointKey:
    """What makes two targets' endpoints one: the embedded demo, or the same URL and key."""
    demo = config.uses_demo_endpoint
    return (demo, None if demo else config.base_url, None if demo else config.api_key)


class Endpoints:
    """Each distinct endpoint opened once on `stack` (closed with it); `known` ones (the app's
    own, already open) are reused as they are."""

    def __init__(
        self,
        stack: ExitStack,
        notice: Callable[[str], None],
        known: Mapping[EndpointKey, Endpoint] | None = None,
    ) -> None:
        self.stack = stack
        self.notice = notice
        self._opened: dict[EndpointKey, Endpoint] = dict(known or {})

    def open(self, config: Config) -> Endpoint:
        from tui.wiring import open_endpoint

        key = endpoint_key(config)
        if key not in self._opened:
            endpoint = self.stack.enter_context(open_endpoint(config))
            if endpoint.notice:
                self.notice(endpoint.notice)
            self._opened[key] = endpoint
        return self._opened[key]


def lane_for(
    target: RaceTarget,
    config: Config,
    endpoint: Endpoint,
    state: ChatState,
    history: Callable[[ChatState], ChatHistory],
    *,
    network: NetworkLoop | None = None,
    client: Any = None,
) -> Lane:
    """A lane answering `state`'s conversation (its model and switches set here from the
    target), over `client` when one is given (the app's, for the endpoint it has open)."""
    from tui.engine.tokens.counter import get_counter
    from tui.session.chat import Chat
    from tui.session.engine_link import EngineLink
    from tui.wiring import client_for

    state.model = target.model
    if target.trim is not None:
        state.trim_enabled = target.trim
    if target.stream is not None:
        state.streaming = target.stream
    if target.budget is not None:
        state.budget = target.budget
        if target.trim is None:
            state.trim_enabled = True  # a budget alone means "trim to it", as for ask
    counter = get_counter(config.model)
    engine = EngineLink(lambda: nullcontext(endpoint), [config.model], network)
    engine.endpoint = endpoint
    engine.client = client if client is not None else client_for(config, endpoint, counter)
    engine.counter, engine.connected = counter, True
    engine.ready.set()
    return Lane(target.label, Chat(state, history(state), engine))


def state_for(config: Config, messages: list[dict[str, Any]], **changes: Any) -> ChatState:
    """A lane's chat state: `config`'s switches, the race's conversation, `changes` over them."""
    from tui.session.chat_state import ChatState

    return dataclasses.replace(ChatState.from_config(config, messages), **changes)
