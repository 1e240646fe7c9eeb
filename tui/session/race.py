"""A race over chats: the same message sent through one chat per target, round by round.

Each target is a lane: a Chat of its own (its model, endpoint and settings; its own replies, so
the next message goes on each target's own conversation) whose turns are ordinary turns
(chat.py), saved as they stream, their records filed marked as this race's. One at a time the
lanes take turns in an order that reverses every round (engine/race.py), so drift favours no
one; `together` runs every lane's turn at once, for targets on different servers. Receipt times
are stamped on the network side as always: one lane's rendering never moves another's
timestamps. How a lane's turn is run and shown is the surface's (`run_lane`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tui.engine.race import TargetResult, new_race_id, race_order

if TYPE_CHECKING:
    from tui.engine.chat.events import Finished
    from tui.session.chat import Chat
    from tui.session.turn import ReplySink


@dataclass
class Lane:
    label: str
    chat: Chat
    result: TargetResult = field(init=False)

    def __post_init__(self) -> None:
        client = self.chat.engine.client
        self.result = TargetResult(
            self.label,
            model=self.chat.state.model,
            endpoint_host=client.host if client is not None else "",
            trim=self.chat.state.trim_enabled,
            stream=self.chat.state.streaming,
        )

    @property
    def result_simulated(self) -> bool:
        """Whether this lane's endpoint is the embedded demo's simulation."""
        client = self.chat.engine.client
        return client is not None and client.simulated


RunLane = Callable[[Lane], Awaitable["Finished | None"]]


class Race:
    def __init__(self, lanes: Sequence[Lane], *, together: bool = False) -> None:
        if len(lanes) < 2:
            raise ValueError("a race needs two lanes or more")
        self.lanes = list(lanes)
        self.together = together
        self.race_id = new_race_id()
        self.rounds = 0
        for lane in self.lanes:
            lane.chat.race = (self.race_id, lane.label)  # its records are filed marked
        # One chat for the race, a lane per target: every target's reply to each prompt.
        labels = [lane.label for lane in self.lanes]
        chat_id = self.lanes[0].chat.history.open_race(labels)
        if chat_id is not None:
            for index, lane in enumerate(self.lanes):
                lane.chat.history.join_race(chat_id, index)

    def order(self) -> list[Lane]:
        """The next round's lanes in turn (the order reversed every other round)."""
        turns = race_order(len(self.lanes), self.rounds + 1)[self.rounds]
        return [self.lanes[i] for i in turns]

    async def round(self, run_lane: RunLane, stopped: Callable[[], bool] = lambda: False) -> None:
        """Every lane answers its chat's conversation as it stands (the caller has added the
        round's message to each); each outcome joins its lane's result."""
        order = self.order()
        self.rounds += 1
        if self.together:
            outcomes = await asyncio.gather(*(run_lane(lane) for lane in order))
            for lane, outcome in zip(order, outcomes, strict=True):
                if outcome is not None:
                    lane.result.records.append(outcome.record)
            return
        for lane in order:
            if stopped():
                return
            outcome = await run_lane(lane)
            if outcome is not None:
                lane.result.records.append(outcome.record)


async def run_headless(lane: Lane, sink: ReplySink, stop: asyncio.Event | None = None) -> Finished:
    """One lane's turn with nothing on a screen: sent, awaited, counted and filed; `stop`
    cancels it the engine's way (what arrived and its record are kept)."""
    turn = lane.chat.begin(sink)
    watcher = asyncio.ensure_future(stop.wait()) if stop is not None else None
    if watcher is not None:
        watcher.add_done_callback(lambda done: None if done.cancelled() else turn.cancel())
    try:
        finished = await turn.outcome()
    finally:
        if watcher is not None:
            watcher.cancel()
    await lane.chat.settle(turn, finished, server_count=False)
    lane.chat.file(turn, finished)
    return finished
