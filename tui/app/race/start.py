"""Starting a race in the app: its lanes made off the UI thread (opening another endpoint or
loading another model's vocabulary must not stall a frame), then the race screen.

Lanes share the app's network loop, and a target on the endpoint the app already has open
shares its client and connections; another endpoint is opened once and closed with the app.
A race the chat starts (the race key) races the chat's conversation: "this chat" (its model
and switches) against the target typed, which may be only settings (`trim=off`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from tui.race_targets import RaceTarget, TargetError, parse_target, parse_targets

if TYPE_CHECKING:
    from tui.config import Config, ConfigFlags
    from tui.session.chat import Chat
    from tui.session.chat_state import ChatState
    from tui.session.history import ChatHistory
    from tui.session.race import Race


# `firsttoken --race A B`: the targets, together, cold.
RaceAtStart = tuple[list[RaceTarget], bool, bool]


def against_this_chat(state: ChatState, typed: str) -> list[RaceTarget]:
    """The chat as it is (its model and switches) against `typed`: a target, or only
    settings (`trim=off,stream=off`) for this chat's model with them changed. TargetError
    when it does not parse or changes nothing."""
    typed = typed.strip()
    if not typed:
        raise TargetError("race: name a target (MODEL, MODEL@URL, PROVIDER:MODEL) or settings")
    head = typed.split(",", 1)[0]
    if "=" in head:  # only settings: this chat's model with them
        typed = f"{state.model},{typed}"
    other = parse_target(typed)
    switches = {"trim": state.trim_enabled, "stream": state.streaming}
    named = [key for key in ("trim", "stream") if getattr(other, key) is not None]
    own = ",".join([state.model, *(f"{k}={'on' if switches[k] else 'off'}" for k in named)])
    if own == other.label:
        raise TargetError(f"race: {other.label!r} is this chat as it is; change something")
    return parse_targets([own, other.label])


class RaceOpener:
    """What the app needs to open a race's lanes: its config, the flags it was started with
    (for a target's own endpoint or provider), its engine and history."""

    def __init__(self, config: Config, flags: ConfigFlags, chat: Chat) -> None:
        self.config = config
        self.flags = flags
        self.chat = chat
        self.stack = ExitStack()  # endpoints a race opened, closed with the app
        self.clients: list[Any] = []  # clients a race made (not the app's own)

    def lanes(
        self,
        targets: Sequence[RaceTarget],
        messages: list[dict[str, Any]],
        *,
        together: bool,
        cold: bool,
        notice: Any,
    ) -> Race:
        """The race (a thread: may open endpoints and load vocabularies); ConfigError, OSError
        and ValueError say what failed."""
        from tui.race_targets import target_config
        from tui.session.history import ChatHistory
        from tui.session.race import Race
        from tui.session.race_lanes import Endpoints, endpoint_key, lane_for, state_for

        engine = self.chat.engine
        known = {}
        if engine.endpoint is not None:
            known[endpoint_key(self.config)] = engine.endpoint
        endpoints = Endpoints(self.stack, notice, known)
        store = self.chat.history.store

        def history(state: ChatState) -> ChatHistory:
            return ChatHistory(store, state, warn=notice)

        lanes = []
        for target in targets:
            config = target_config(target, self.config, self.flags)
            endpoint = endpoints.open(config)
            shared = engine.client if endpoint is engine.endpoint else None
            state = state_for(config, messages, cold=cold)
            lane = lane_for(
                target, config, endpoint, state, history, network=engine.network, client=shared
            )
            if shared is None:
                self.clients.append(lane.chat.engine.client)
            assert lane.chat.engine.counter is not None
            lane.chat.engine.counter.count_messages(messages)  # loads its vocabulary now
            lanes.append(lane)
        return Race(lanes, together=together)

    def close(self) -> None:
        """The clients races made, closed on the network loop; then their endpoints."""
        import concurrent.futures
        import contextlib

        network = self.chat.engine.network
        for client in self.clients:
            if network is not None:
                with contextlib.suppress(Exception, concurrent.futures.TimeoutError):
                    network.submit(client.aclose()).result(timeout=1.0)
        self.clients.clear()
        self.stack.close()
