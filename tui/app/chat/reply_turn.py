"""One turn of the chat on screen: Enter, the reply streaming into its block, its figures.

The turn itself (the message saved, the request counted, trimmed and sent, drafts, the record
filed) is the session's (tui/session/chat.py); this is how the app shows it. The request leaves
the moment Enter is handled (before any widget is built): the engine client runs on its own
loop, the reply's text reaches the screen through a coalescing writer (ReplyWriter), and the
side panel's live figures come from a ~10 Hz tick that reads the turn's receipt times. Screen
updates are held from Enter until the first words (EnterFrameHold), so a fast first token
shares Enter's frame. The view is handed its chat log, prompt and panel: it never looks the
screen up, so two of them can share one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from tui.app.chat.collector import CollectorPause
from tui.app.chat.reasoning_block import ReasoningFeed
from tui.app.chat.reply_writer import ReplyWriter
from tui.app.panel.live_figures import live_figures
from tui.app.panel.request_verdict import expected_class
from tui.app.panel.ttft_history import TtftSample, format_ms
from tui.app.render import EnterFrameHold
from tui.app.untrusted import shown, shown_error, shown_line
from tui.engine.metrics.record import RequestRecord, RequestStatus
from tui.session.turn import QuietSink

if TYPE_CHECKING:
    from textual.app import App

    from tui.app.chat.chat_log import ChatLog
    from tui.app.chat.message_view import AssistantMessage
    from tui.app.chat.prompt_input import PromptInput
    from tui.app.panel.live_figures import LiveFigures
    from tui.app.preferences import PromptHistory
    from tui.engine.chat.events import Finished
    from tui.engine.metrics.request_classes import ClassChoice
    from tui.session.chat import Chat
    from tui.session.turn import Turn

PANEL_TICK_S = 0.1  # the live counter's rate: 10 Hz, independent of the token rate
STREAMING_TICK_EVERY = 3  # once tokens flow: every 3rd tick (~3 Hz)
# While the reply's writes come at least this often, the figures wait for the next write and
# share its frame (above the writer's longest pause, reply_writer.MAX_INTERVAL_S).
WRITES_CARRY_FIGURES_S = 0.3

Started = tuple["Turn", "AssistantMessage", ReplyWriter]


class ReplyFigures(Protocol):
    """Where a reply's figures are shown: the side panel, or a race lane's own."""

    def show_live(self, live: LiveFigures, expected: ClassChoice | None = None) -> None: ...

    def show_record(self, record: RequestRecord) -> None: ...

    def add_sample(self, sample: TtftSample) -> None: ...


def reply_status(record: RequestRecord) -> str:
    """The line on a reply's bottom border: its outcome and figures."""
    parts = []
    if record.status == RequestStatus.CANCELLED:
        parts.append("⊘ cancelled")
    elif record.status != RequestStatus.OK:
        parts.append(f"⚠ {record.status.value.replace('_', ' ')}")
    if record.ttft_ms is not None:
        label = "TTFT" if record.streamed else "TTFT=total"
        parts.append(f"{label} {format_ms(record.ttft_ms)}")
    if record.total_ms is not None and record.streamed:
        parts.append(f"total {format_ms(record.total_ms)}")
    if record.output_tokens:
        parts.append(f"{record.output_tokens} tok")
    return " · ".join(parts)


class WriterSink(QuietSink):
    """The turn's text into the reply's coalescing writer (on the network side)."""

    def __init__(self, writer: ReplyWriter) -> None:
        self.writer = writer

    def text(self, shown: str) -> None:
        self.writer.feed(shown)

    def ended(self) -> None:
        self.writer.end()


class ReplyTurn:
    """Sends the user's messages through `chat` and shows the replies, one at a time, in
    `log` and `panel`; `finished` hears of each record once its reply is shown."""

    def __init__(
        self,
        app: App[Any],
        chat: Chat,
        log: ChatLog,
        prompt: PromptInput | None,
        panel: ReplyFigures,
        prompt_history: PromptHistory | None,
        finished: Callable[[RequestRecord], None],
    ) -> None:
        self.app = app
        self.chat = chat
        self.log = log
        self.prompt = prompt
        self.panel = panel
        self.prompt_history = prompt_history
        self._on_finished = finished
        self.current: Turn | None = None  # the turn under way (or the last one)
        self.answered: Finished | None = None  # the last turn's outcome, as it was shown
        self.collector = CollectorPause()  # no full garbage collection while a reply streams
        self.enter_hold: EnterFrameHold | None = None
        self._active = False
        self._view: AssistantMessage | None = None  # the reply streaming now
        self.writer: ReplyWriter | None = None  # the reply's, while it streams
        self._ticks = 0
        self._figures_due = False  # the tick left the live figures for the next write

    @property
    def busy(self) -> bool:
        """From Enter until the reply is fully rendered, recorded and saved."""
        return self._active

    # -- sending -----------------------------------------------------------------------------

    def submit(self, text: str) -> None:
        """Send `text` as the next user message (Enter calls this directly)."""
        if self.busy:
            self.app.notify("a reply is still streaming: esc cancels it", severity="warning")
            return
        log = self.log
        if log.replacing:
            # Enter right after Ctrl+G / Ctrl+N / F6: the message goes after that chat's
            # blocks, so it is sent once they are on screen.
            self._once_shown(partial(self.submit, text))
            return
        state = self.chat.state
        if not text:
            if state.awaiting_reply():
                self.retry()  # send the loaded conversation as it stands
            return
        assert self.prompt is not None, "a view that takes Enter has a prompt"
        hold = self.enter_hold = EnterFrameHold(self.app)  # Enter and fast first words
        index = self.chat.add_user(text)  # saved before it is sent
        # The user's block first (normally the hidden spare: filled and shown, nothing mounted),
        # so the reply's block lands after it; then the request leaves; the rest follows.
        log.add_message(index, shown(state.messages[index]))
        self._active = True
        started = self._begin() if self.chat.engine.client is not None else None
        self.prompt.clear_prompt()
        if self.prompt_history is not None:
            # Recall sees it now; the file is written once Enter's frame is on screen.
            self.prompt_history.append(text, save=False)
            hold.after_frame(self.prompt_history.save)
        self._await_reply(started)

    def retry(self) -> None:
        """Send the last prompt again (its reply and errors removed)."""
        if self.busy:
            return
        if self.log.replacing:  # as in submit: after that chat's blocks
            self._once_shown(self.retry)
            return
        prompt = self.chat.state.drop_last_reply()
        if prompt is None:
            self.app.notify("nothing to retry yet", severity="warning")
            return
        self.log.remove_last_turn_replies()
        self.chat.history.past_changed(create=True)  # before the request: its record names the chat
        self._active = True
        started = self._begin() if self.chat.engine.client is not None else None
        self._await_reply(started)

    def cancel(self) -> None:
        if self.busy and self.current is not None:
            self.current.cancel()

    async def answer(self) -> Finished | None:
        """Send the conversation as it stands (its message added by the caller: a race lane)
        and show the reply; its outcome, once the reply is shown and filed."""
        if self.busy:
            return None
        self._active = True
        self.answered = None
        started = self._begin() if self.chat.engine.client is not None else None
        await self._run_reply(started)
        return self.answered

    def _once_shown(self, then: Callable[[], None]) -> None:
        async def once_shown() -> None:
            await self.log.replaced()
            then()

        self.app.run_worker(once_shown(), group="once-shown")

    def _begin(self) -> Started:
        """Hand the request to the engine now; the reply's block is created here and mounted
        by the caller's next steps."""
        writer = ReplyWriter()
        writer.with_write = self._show_due_figures
        self._figures_due = False
        if self.enter_hold is not None:
            writer.on_first_text = self.enter_hold.release
        turn = self.chat.begin(WriterSink(writer))  # on its way before any widget is built
        view = self.log.next_reply(len(self.chat.state.messages), shown_line(self.chat.state.model))
        writer.markdown = view.markdown
        self.current, self.writer = turn, writer
        return turn, view, writer

    def _await_reply(self, started: Started | None) -> None:
        self.app.run_worker(self._run_reply(started), group="request", exclusive=True)

    async def _run_reply(self, started: Started | None) -> None:
        self.collector.pause()
        try:
            await self._reply(started)
        finally:
            self._active = False
            self.collector.resume()

    async def _reply(self, started: Started | None) -> None:
        if started is None:
            # Enter came before the engine was open: wait for it (only right after start).
            await self.chat.engine.ready.wait()
            started = self._begin()
        turn, view, writer = started
        prompt = self.prompt
        blink = prompt.cursor_blink if prompt is not None else False
        if prompt is not None:
            prompt.set_blinking(False)  # a blinking cursor is two extra frames a second
        mounted = self.log.show_reply(view)
        view.set_status("waiting for the first token…", live=True)
        self._view = view
        thinking = ReasoningFeed(turn.state, view.reasoning_block)
        thinking.start(view.set_interval)
        # The panel's waiting figures follow Enter's frame instead of joining it: that frame
        # is held for the first words (EnterFrameHold), and the panel's rows are a large part
        # of its rendering. The panel is a frame later; the first words are sooner.
        if self.enter_hold is not None:
            self.enter_hold.after_frame(self.tick)
        else:
            self.tick()
        writer.start(mounted)
        try:
            finished = await turn.outcome()
            self.answered = finished
            await writer.finish(shown(finished.text))
        except Exception as error:  # the engine promises Finished; never let the app die
            if turn.state.finished is not None:  # the request ended; showing it failed
                self.chat.file(turn, turn.state.finished)
            view.remove()
            self.log.add_error(*shown_error("unexpected", f"{type(error).__name__}: {error}", ""))
            self.current = None
            return
        finally:
            if prompt is not None:
                prompt.set_blinking(blink)
            self._view = None
            self._release_enter_hold()
            final = turn.state.finished
            thinking.finish(final.reasoning if final is not None else None)
        if not self.chat.sent_from_here(turn) or not view.is_attached:
            # Another conversation is on screen now (or the app is closing): nothing left to
            # show, but the record and what arrived still belong to the chat the request was
            # sent from. (The old view may not be unmounted yet: it cannot tell.)
            self.chat.file(turn, finished)
            return
        await self._finished(turn, view, finished)

    def _release_enter_hold(self) -> None:
        hold, self.enter_hold = self.enter_hold, None
        if hold is not None:
            hold.release()

    async def _finished(self, turn: Turn, view: AssistantMessage, finished: Finished) -> None:
        record = finished.record
        text = finished.text
        status = record.status
        if text:
            status_line = reply_status(record)
            note = (record.model, status_line)
            view.message_index = self.chat.state.add_assistant(text, finished.reasoning, note)
            view.set_status(status_line)
            if status != RequestStatus.OK:
                view.add_class(f"-{status.value}")
        elif status == RequestStatus.CANCELLED:
            # Nothing arrived: keep a marker (not part of the conversation sent next time).
            view.message_index = None
            view.add_class("-cancelled")
            view.set_status(reply_status(record))
            await view.markdown.update("*cancelled before the first token*")
        else:
            await view.remove()
        if status in (RequestStatus.ERROR, RequestStatus.STALLED, RequestStatus.ENDED_EARLY):
            self.log.add_error(*shown_error(record.error_kind, record.error_message, status.value))
        panel = self.panel
        panel.show_record(record)
        sample = TtftSample.of(record)
        if sample is not None:
            panel.add_sample(sample)
        # The app's gauge asks the server for its counts of the next request instead.
        await self.chat.settle(turn, finished, server_count=False)
        self.chat.file(turn, finished)
        self._on_finished(record)
        # The reply's last words are on screen already: the next turn's blocks are mounted
        # now, so the record's layout places them too (one layout and frame fewer a reply).
        self.log.prepare_turn()

    async def stop(self) -> None:
        """The app is closing: a reply under way is cancelled, and its record and partial
        text kept, as Esc would (its worker is being cancelled with the app)."""
        await self.chat.stop(self.current)

    # -- the panel's live figures ------------------------------------------------------------

    def tick(self) -> None:
        """The panel's timer (PANEL_TICK_S): the live figures of the request under way."""
        turn = self.current
        if turn is None or turn.state.finished is not None:
            return
        hold = self.enter_hold
        if hold is not None and hold.held:
            return  # the panel follows Enter's frame (see _reply)
        state = turn.state
        self._ticks += 1
        if state.first_token_at is not None:
            if self._ticks % STREAMING_TICK_EVERY:
                # While text streams the reply itself shows progress: the figures refresh at
                # a few Hz; the waiting counter above keeps 10 Hz.
                return
            writer = self.writer
            if writer is not None and writer.writing(WRITES_CARRY_FIGURES_S):
                # The next write shows them: one frame for both, not a frame of their own.
                # A stalled stream stops writing, and then the tick shows them itself.
                self._figures_due = True
                return
        self._show_live_figures()

    def _show_due_figures(self) -> None:
        """A write is in the reply's widget: the figures the tick left for it go in its frame."""
        if self._figures_due:
            self._figures_due = False
            self._show_live_figures()

    def _show_live_figures(self) -> None:
        turn = self.current
        if turn is None or turn.state.finished is not None:
            return
        state = turn.state
        view = self._view
        if view is not None and state.first_token_at is None and state.retry_reason:
            view.set_status(f"retry {state.retries}: {state.retry_reason}", live=True)
        live = live_figures(state, time.perf_counter(), turn.request.stream)
        if view is not None and state.first_token_at is not None:
            paused = (
                "" if live.paused_ms is None else f" · no token for {live.paused_ms / 1000:.1f} s…"
            )
            doing = "thinking" if state.first_answer_at is None and state.reasoning else "streaming"
            view.set_status(f"{doing}… · {state.tokens:,} tok{paused}", live=True)
        self.panel.show_live(live, expected_class(turn))
