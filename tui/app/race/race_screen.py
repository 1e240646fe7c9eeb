"""A race on screen: one column per target, each streaming its reply under its own live TTFT,
tokens per second and waterfall, a scoreboard above them, one prompt below.

Enter adds the message to every lane's conversation and runs a round (session/race.py): one
lane at a time in an order that reverses every round, or all at once. Each lane is a reply view
(chat/reply_turn.py) handed its own chat log and figures, so a lane's reply is shown, saved and
filed exactly as a chat's is. Esc cancels the round (what arrived stays); the race key or
Ctrl+W goes back to the chat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header

from tui.app.chat.chat_log import ChatLog
from tui.app.chat.prompt_input import PromptInput
from tui.app.chat.reply_turn import PANEL_TICK_S, ReplyTurn
from tui.app.keymap import RACE_BINDINGS
from tui.app.race.lane_panel import LanePanel
from tui.app.race.scoreboard import Scoreboard, about_line
from tui.app.render import RenderScreen
from tui.app.untrusted import shown, shown_host, shown_line, shown_messages
from tui.engine.race import race_verdict

if TYPE_CHECKING:
    from tui.engine.chat.events import Finished
    from tui.engine.metrics.record import Thresholds
    from tui.session.race import Lane, Race

RACE_KEY = "f12"


class RaceScreen(RenderScreen):
    AUTO_FOCUS = "#race-prompt"
    BINDINGS: ClassVar[list[BindingType]] = list(RACE_BINDINGS)
    DEFAULT_CSS = """
    RaceScreen #race-lanes { height: 1fr; }
    RaceScreen .race-lane { width: 1fr; height: 1fr; border-right: solid $panel-lighten-1; }
    RaceScreen .race-lane:last-of-type { border-right: none; }
    RaceScreen .race-lane ChatLog { height: 1fr; }
    """

    def __init__(self, race: Race, thresholds: Thresholds, *, cold: bool) -> None:
        super().__init__()
        self.race = race
        self.thresholds = thresholds
        self.cold = cold
        self.views: list[ReplyTurn] = []
        self.panels = [
            LanePanel(shown_line(lane.label), self._where(lane), thresholds, id=f"lane-panel-{i}")
            for i, lane in enumerate(race.lanes)
        ]
        self.logs = [ChatLog(id=f"lane-{i}") for i in range(len(race.lanes))]
        labels = [shown_line(lane.label) for lane in race.lanes]
        self.scoreboard = Scoreboard(about_line(labels, race.together, cold))
        self._in_round = False

    @staticmethod
    def _where(lane: Lane) -> str:
        """The lane's model and endpoint, and whether its figures are simulated."""
        client = lane.chat.engine.client
        host = shown_host(client.base_url) if client is not None else ""
        simulated = " · simulated" if client is not None and client.simulated else ""
        return f"{shown_line(lane.chat.state.model)} @ {host}{simulated}"

    @property
    def busy(self) -> bool:
        return self._in_round

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◷")
        yield self.scoreboard
        with Horizontal(id="race-lanes"):
            for panel, log in zip(self.panels, self.logs, strict=True):
                with Vertical(classes="race-lane"):
                    yield panel
                    yield log
        prompt = PromptInput(history=[], id="race-prompt")
        prompt.border_title = "message to every target"
        prompt.border_subtitle = f"enter race · esc cancel · {RACE_KEY} back to the chat"
        yield prompt
        yield Footer()

    def on_mount(self) -> None:
        labels = (shown_line(lane.label) for lane in self.race.lanes)
        self.app.sub_title = "race · " + " vs ".join(labels)
        for lane, log, panel in zip(self.race.lanes, self.logs, self.panels, strict=True):
            if lane.chat.state.messages:
                log.add_messages(shown_messages(lane.chat.state.messages))
            view = ReplyTurn(self.app, lane.chat, log, None, panel, None, lambda _record: None)
            self.views.append(view)
            self.set_interval(PANEL_TICK_S, view.tick)
        prompt = self.query_one(PromptInput)
        prompt.on_submit = self.submit
        prompt.focus()

    def submit(self, text: str) -> None:
        """Enter: the message joins every lane's conversation, then the round runs."""
        if self._in_round:
            self.notify("a round is still running: esc cancels it", severity="warning")
            return
        if not text.strip():
            return
        for lane, log in zip(self.race.lanes, self.logs, strict=True):
            index = lane.chat.add_user(text)  # saved before it is sent
            log.add_message(index, shown(lane.chat.state.messages[index]))
        self.query_one(PromptInput).clear_prompt()
        self._in_round = True
        self.run_worker(self._round(), group="race-round", exclusive=True)

    async def _round(self) -> None:
        views = dict(zip((id(lane) for lane in self.race.lanes), self.views, strict=True))

        async def run_lane(lane: Lane) -> Finished | None:
            return await views[id(lane)].answer()

        try:
            await self.race.round(run_lane, stopped=lambda: not self._in_round)
        finally:
            self._in_round = False
        self._score()

    def _score(self) -> None:
        """The round's first TTFTs and the verdict over every round so far."""
        ttfts: dict[str, float | None] = {}
        for lane in self.race.lanes:
            records = lane.result.records
            ttfts[shown_line(lane.label)] = records[-1].ttft_ms if records else None
        verdict = race_verdict([lane.result for lane in self.race.lanes])
        self.scoreboard.add_round(ttfts, verdict)

    def action_cancel(self) -> None:
        """Esc: the replies under way stop (what arrived stays), the round ends."""
        if not self._in_round:
            return
        self._in_round = False
        for view in self.views:
            view.cancel()

    def action_leave(self) -> None:
        if self._in_round:
            self.notify("a round is still running: esc cancels it first", severity="warning")
            return
        self.dismiss(None)

    async def stop(self) -> None:
        """The app is closing: replies under way are cancelled, their records kept."""
        for view in self.views:
            await view.stop()
