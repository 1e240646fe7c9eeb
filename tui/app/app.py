"""FirstTokenApp: the chat pane, the prompt and the live latency panel over the engine.

Start-up is kept under half a second by importing nothing heavy here: the engine's client
(openai) and the token counter's vocabulary are loaded by a thread worker after the first
frame, which then creates the client and calls `list_models()` on the app's loop, so the
keep-alive connection is open before the first Enter.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, ExitStack
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, TextArea
from textual.worker import Worker, WorkerState

from tui.app.chat_history import ChatHistory
from tui.app.chat_session import ChatSession, TrimPreview
from tui.app.collector import CollectorPause
from tui.app.keymap import APP_BINDINGS, HELP_ENTRIES, PALETTE_COMMANDS
from tui.app.live_figures import LiveFigures, live_figures
from tui.app.render import EnterFrameHold, RenderScreen, notices, repaint_everything
from tui.app.request_runner import NetworkLoop, RequestRunner
from tui.app.widgets.budget_gauge import BudgetFigures
from tui.app.widgets.chat_log import ChatLog
from tui.app.widgets.latency_panel import LatencyPanel
from tui.app.widgets.message_view import AssistantMessage
from tui.app.widgets.prompt_input import PromptInput
from tui.app.widgets.reply_writer import ReplyWriter
from tui.app.widgets.ttft_history import HISTORY_LENGTH, TtftSample, format_ms
from tui.engine.metrics import RequestRecord, RequestStatus

if TYPE_CHECKING:
    from tui.config import Config
    from tui.engine.client import ChatClient
    from tui.engine.endpoint import Endpoint
    from tui.engine.events import Finished
    from tui.engine.store import Store
    from tui.engine.tokens import TokenCounter

NARROW_WIDTH = 100  # below this many columns the side panel starts collapsed
PREVIEW_DEBOUNCE_S = 0.15
PANEL_TICK_S = 0.1  # the live counter's rate: 10 Hz, independent of the token rate
STREAMING_TICK_EVERY = 3  # once tokens flow: every 3rd tick (~3 Hz)
# While the reply's writes come at least this often, the figures wait for the next write and
# share its frame (above the writer's longest pause, reply_writer.MAX_INTERVAL_S).
WRITES_CARRY_FIGURES_S = 0.3
WORKER_ENDED = (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED)

RecordHook = Callable[[RequestRecord], RequestRecord]


class ChatScreen(RenderScreen):
    """The main screen: a growing reply repaints only its new rows (GrowthAwareScreen), and
    the prompt has the focus from the screen's first moment. Keys typed while the app starts
    are read before `on_mount` runs; they went to the first focusable widget (the chat log)
    and were lost."""

    AUTO_FOCUS = "#prompt"


class FirstTokenApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "firsttoken"

    BINDINGS: ClassVar[list[BindingType]] = list(APP_BINDINGS)

    def __init__(
        self,
        config: Config,
        endpoint: Endpoint | None = None,
        *,
        messages: list[dict[str, Any]] | None = None,
        store: Store | None = None,
        remember: bool = True,
        open_endpoint: Callable[[], AbstractContextManager[Endpoint]] | None = None,
        resume_chat: int | None = None,
    ) -> None:
        super().__init__()
        self.config = config
        # Either given (tests), or opened by the warm-up thread: opening it imports openai and
        # may start the demo server, neither of which belongs on the start-up path.
        self.endpoint = endpoint
        self._open_endpoint = open_endpoint
        self._endpoint_stack = ExitStack()
        self.endpoint_notice: str | None = None
        self.session = ChatSession.from_config(config, messages)
        self.history = ChatHistory(store, self.session, self._warn)
        self._resume_chat = resume_chat  # a saved chat to open once the first frame is out
        self.remember = remember  # False in tests that must not touch preferences
        self.counter: TokenCounter | None = None
        self.client: ChatClient | None = None
        self.models: list[str] = list(config.models) or [config.model]
        self.runner: RequestRunner | None = None
        self.network = NetworkLoop()  # the engine client's own loop (thread)
        self.preview: TrimPreview | None = None
        self.last_record: RequestRecord | None = None
        self._ready_at: float | None = None
        self.connected = False  # list_models() has answered (or failed): warm-up complete
        self._render_warm = False  # the reply's modules are imported (or failed to)
        self._settled = False  # start-up is over: heap frozen, collector on (see _start_up_done)
        self._preview_timer: Timer | None = None
        self._panel_forced: bool | None = None  # the user's toggle beats the width rule
        # Test-only hooks: snapshots replace wall-clock figures with fixed ones.
        self.record_hook: RecordHook | None = None
        self.live_panel = True
        self.live_hook: Callable[[LiveFigures], LiveFigures] | None = None
        self.host_label: str | None = None  # shown instead of the real host:port
        self._streaming_view: AssistantMessage | None = None
        self._enter_hold: EnterFrameHold | None = None
        self._ticks = 0
        self._figures_due = False  # the tick left the live figures for the next write
        self._request_active = False
        self.collector = CollectorPause()  # no full garbage collection while a reply streams
        from tui.app.preferences import Preferences, PromptHistory

        self.preferences = Preferences.load() if remember else Preferences()
        self.prompt_history = PromptHistory() if remember else None
        # The model picked last time, unless the config names one explicitly.
        remembered = self.preferences.last_model
        if remembered and config.origin("model") == "default":
            self.session.model = remembered
        if self.preferences.side_panel_collapsed:
            self._panel_forced = False
        self._theme_errors = self._load_themes()

    # -- layout ------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◷")
        with Horizontal(id="main"):
            with Vertical(id="chat-column"):
                yield ChatLog(id="chat")
                history = self.prompt_history.entries if self.prompt_history else []
                prompt = PromptInput(history=history, id="prompt")
                prompt.border_title = "message"
                prompt.border_subtitle = "enter send · ctrl+j newline · ↑ history"
                yield prompt
            yield LatencyPanel(self.config.thresholds(), id="panel")
        yield Footer()

    def on_mount(self) -> None:
        for error in self._theme_errors:
            self.notify(error, title="theme file skipped", severity="warning", timeout=8)
        self.sub_title = self._endpoint_label()
        panel = self.query_one(LatencyPanel)
        panel.show_idle()
        panel.show_endpoint(self.session.model, self._host(), self.simulated)
        self._show_switches()
        panel.show_prompt(None, False)
        self.call_after_refresh(panel.fill)  # its widgets come right after the first frame
        if self.session.messages:
            self.query_one(ChatLog).add_messages(self.session.messages)
        self.set_interval(PANEL_TICK_S, self._tick)
        prompt = self.query_one(PromptInput)
        prompt.on_submit = self.submit
        prompt.focus()
        self.theme_changed_signal.subscribe(self, self._on_theme_changed)
        for warning in self.config.warnings:
            self.notify(warning, title="config", severity="warning", timeout=10)
        for notice in notices():
            self.notify(notice, title="render", severity="warning", timeout=10)
        # After the first frame: the heavy imports must not delay the first paint (GIL).
        self.call_after_refresh(self._warm_up)
        if self._resume_chat is not None:
            self.call_after_refresh(self._open_chat, self._resume_chat)

    def _host(self) -> str:
        if self.host_label is not None:
            return self.host_label
        if self.endpoint is None:
            if self.config.base_url is None:
                return "demo endpoint (starting…)"
            return urlsplit(self.config.base_url).netloc or self.config.base_url
        parts = urlsplit(self.endpoint.base_url)
        return parts.netloc or self.endpoint.base_url

    @property
    def simulated(self) -> bool:
        if self.endpoint is None:
            return self.config.uses_demo_endpoint
        return self.endpoint.simulated

    def _endpoint_label(self) -> str:
        simulated = " (simulated)" if self.simulated else ""
        return f"{self.session.model} · {self._host()}{simulated}"

    # -- themes ------------------------------------------------------------------------------

    def _load_themes(self) -> list[str]:
        """Register the theme files and choose the remembered theme, before the app runs: set
        later (on mount) it restyles every widget once more before the first frame."""
        from tui.app.themes import DEFAULT_THEME, register_themes

        result = register_themes(self)
        wanted = self.preferences.theme or DEFAULT_THEME
        if wanted in self.available_themes:
            self.theme = wanted
        return result.errors

    def _on_theme_changed(self, _theme: object) -> None:
        # Rich styles in the panel captured the old colours: re-render them once.
        self.query_one(LatencyPanel).restyle()
        self._refresh_panel()
        if self.remember and self.preferences.theme != self.theme:
            self.preferences.theme = self.theme
            self.preferences.save()

    # -- warm-up: heavy imports and the first connection, off the UI thread -------------------

    @work(thread=True, exclusive=True, group="warm-up")
    def _warm_up(self) -> tuple[TokenCounter, ChatClient, Endpoint]:
        """Everything the first Enter would otherwise pay for, done before it."""
        from tui.engine.endpoint import client_for  # imports openai: ~0.9 s here
        from tui.engine.request_builder import build_request
        from tui.engine.tokens import get_counter

        endpoint = self.endpoint
        if endpoint is None:
            assert self._open_endpoint is not None, "give the app an endpoint or a way to open one"
            endpoint = self._endpoint_stack.enter_context(self._open_endpoint())
        counter = get_counter(self.session.model).load()
        client = client_for(self.config, endpoint, counter)
        # The SDK imports its chat resources lazily on first use (~60 ms): do it now.
        _ = client._sdk.chat.completions
        build_request(
            [{"role": "user", "content": "warm up"}],
            self.config,
            counter,
            trim_enabled=True,
            stream=True,
        )
        return counter, client, endpoint

    @work(thread=True, exclusive=True, group="warm-up-render")
    def _warm_up_render(self) -> None:
        """The first reply's widgets: markdown-it, Textual's Markdown module, pygments.
        Separate from the engine's warm-up so an early Enter never waits for it."""
        from tui.app.widgets.message_view import warm_up_markdown

        warm_up_markdown()

    def _settle_memory(self) -> None:
        """Freeze what start-up built (the imports, the UI): later full collections scan only
        what came after. Unfrozen, one lands inside a reply or under the user's typing
        (measured: ~100 ms pauses). No collection first: with the collector off during
        start-up (see open_app) it stopped the UI for 98-119 ms just after the prompt appeared,
        to free ~11,000 unreachable objects (~1.5 MB of discarded styles and caches). Keeping
        those costs less than a stall while the first message is being typed."""
        gc.freeze()

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group == "warm-up-render" and event.state in WORKER_ENDED:
            self._render_warm = True
            self._start_up_done()
            return
        if worker.group != "warm-up":
            return
        if event.state == WorkerState.SUCCESS:
            assert worker.result is not None  # the warm-up worker returns these three
            self.counter, self.client, endpoint = worker.result
            if self.endpoint is None:
                self.endpoint = endpoint
                self.endpoint_notice = endpoint.notice
                if endpoint.notice:
                    self.notify(endpoint.notice, title="demo endpoint", timeout=8)
                self.sub_title = self._endpoint_label()
                self._refresh_panel()
            self._ready_at = time.perf_counter()
            self._connect()
            self._warm_up_render()
            self._update_preview()
        elif event.state == WorkerState.ERROR:
            gc.enable()  # start-up is over either way (see open_app)
            self.notify(f"cannot start the engine: {worker.error}", severity="error")

    @work(exclusive=True, group="models")
    async def _connect(self) -> None:
        """list_models() opens the keep-alive connection and fills the model picker."""
        assert self.client is not None
        try:
            models = await self.network.call(self.client.list_models())
        except Exception:  # ClientError: the configured list stays; the first send reports it
            return
        finally:
            self.connected = True
            self._start_up_done()
        if models:
            self.models = sorted(set(models) | set(self.config.models))

    def _start_up_done(self) -> None:
        """Once connected and the reply's modules are imported (both in the background):
        freeze the heap, turn the collector on, mount the next turn's blocks. Not before the
        imports: the blocks import Textual's Markdown, and the UI loop would wait for the
        import thread's lock (measured: a 40-60 ms stall just after the prompt appeared)."""
        if self._settled or not (self.connected and self._render_warm):
            return
        self._settled = True
        # Even with a reply under way (Enter came first): freezing stops nothing.
        self._settle_memory()
        if not self.busy:
            self._prepare_turn()
        gc.enable()  # off during start-up when started by the CLI (see open_app)

    # -- the panel -------------------------------------------------------------------------

    def _tick(self) -> None:
        runner = self.runner
        if runner is None or runner.state.finished is not None:
            return
        hold = self._enter_hold
        if hold is not None and hold.held:
            return  # the panel follows Enter's frame (see _reply)
        state = runner.state
        self._ticks += 1
        if state.first_token_at is not None:
            if self._ticks % STREAMING_TICK_EVERY:
                # While text streams the reply itself shows progress: the figures refresh at
                # a few Hz; the waiting counter above keeps 10 Hz.
                return
            if runner.writer.writing(WRITES_CARRY_FIGURES_S):
                # The next write shows them: one frame for both, not a frame of their own
                # (~40 frames of a 4,000-token reply, benchmarks/render). A stalled stream
                # stops writing, and then the tick shows them itself.
                self._figures_due = True
                return
        self._show_live_figures()

    def _show_due_figures(self) -> None:
        """A write is in the reply's widget: the figures the tick left for it go in its frame."""
        if self._figures_due:
            self._figures_due = False
            self._show_live_figures()

    def _show_live_figures(self) -> None:
        runner = self.runner
        if runner is None or runner.state.finished is not None:
            return
        state = runner.state
        view = self._streaming_view
        if view is not None and state.first_token_at is None and state.retry_reason:
            view.set_status(f"retry {state.retries}: {state.retry_reason}", live=True)
        if view is not None and state.first_token_at is not None:
            count = f" · {state.tokens:,} tok" if self.live_panel else ""
            view.set_status(f"streaming…{count}", live=True)
        if not self.live_panel:
            return
        live = live_figures(state, time.perf_counter(), runner.request.stream)
        if self.live_hook is not None:
            live = self.live_hook(live)
        self.query_one(LatencyPanel).show_live(live)

    def _show_switches(self) -> None:
        s = self.session
        self.query_one(LatencyPanel).show_switches(
            trimming=s.trim_enabled,
            streaming=s.streaming,
            strategy=s.strategy,
            budget=s.budget,
            reserve=self.config.reserve_for_output,
        )

    def _refresh_panel(self) -> None:
        # query_one_optional, not query(): a query walks every widget of a long chat.
        panel = self.query_one_optional(LatencyPanel)
        if panel is None:
            return  # the app is closing (the warm-up can end after the screen is gone)
        if self.last_record is not None:
            panel.show_record(self.last_record)
        else:
            panel.show_idle()
        panel.show_endpoint(self.session.model, self._host(), self.simulated)
        self._show_switches()
        self._show_preview()
        panel.refresh_history()

    # -- the trim preview ------------------------------------------------------------------

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if not isinstance(event.text_area, PromptInput):
            return
        if self._preview_timer is not None:
            self._preview_timer.stop()
        self._preview_timer = self.set_timer(PREVIEW_DEBOUNCE_S, self._update_preview)

    def _update_preview(self) -> None:
        prompt = self.query_one_optional(PromptInput)
        if self.counter is None or prompt is None:
            return  # the engine is not ready yet, or the app is closing (a late debounce timer)
        draft = prompt.text
        self.preview = self.session.preview(draft, self.counter)
        self._show_preview()

    def _show_preview(self) -> None:
        preview = self.preview
        panel = self.query_one(LatencyPanel)
        if preview is None:
            return
        self.query_one(ChatLog).mark_dropped(set(preview.dropped_indices))
        actual = self.last_record.prompt_tokens_usage if self.last_record else None
        panel.show_prompt(
            preview.tokens_after,
            preview.exact,
            actual=actual,
            dropped_messages=len(preview.dropped_indices),
            dropped_tokens=preview.dropped_tokens,
            trimming=preview.trimming,
        )
        panel.show_budget(
            BudgetFigures(
                tokens_before=preview.tokens_before,
                tokens_after=preview.tokens_after,
                budget=preview.budget,
                reserve=self.config.reserve_for_output,
                exact=preview.exact,
                trimming=preview.trimming,
            )
        )

    # -- sending -----------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """From Enter until the reply is fully rendered, recorded and saved."""
        return self._request_active

    @on(PromptInput.Submitted)
    def _submitted_message(self, event: PromptInput.Submitted) -> None:
        self.submit(event.text)

    def submit(self, text: str) -> None:
        """Send `text` as the next user message (Enter calls this directly)."""
        if self.busy:
            self.notify("a reply is still streaming: esc cancels it", severity="warning")
            return
        if self.query_one(ChatLog).replacing:
            # Enter right after Ctrl+G / Ctrl+N / F6: the message goes after that chat's
            # blocks, so it is sent once they are on screen.
            self._once_shown(partial(self.submit, text))
            return
        if not text:
            if self.session.awaiting_reply():
                self.action_retry()  # send the loaded conversation as it stands
            return
        prompt = self.query_one(PromptInput)
        hold = self._enter_hold = EnterFrameHold(self)  # Enter and fast first words: one frame
        index = self.session.add_user(text)
        self.history.message_sent(self.session.messages[index])  # saved before it is sent
        # The user's block first (normally the hidden spare: filled and shown, nothing mounted),
        # so the reply's block lands after it; then the request leaves; the rest follows.
        self.query_one(ChatLog).add_message(index, self.session.messages[index])
        self._request_active = True
        started = self._begin_request() if self.client is not None else None
        prompt.clear_prompt()
        if self.prompt_history is not None:
            # Recall sees it now; the file is written once Enter's frame is on screen.
            self.prompt_history.append(text, save=False)
            hold.after_frame(self.prompt_history.save)
        self._await_reply(started)

    @work(group="once-shown")
    async def _once_shown(self, then: Callable[[], None]) -> None:
        await self.query_one(ChatLog).replaced()
        then()

    def _begin_request(self) -> tuple[RequestRunner, AssistantMessage]:
        """Build the request and hand it to the network loop now; the reply's block is
        created here and mounted by the caller's next steps."""
        assert self.client is not None and self.counter is not None
        request = self.session.build_request(self.counter)
        writer = ReplyWriter()
        writer.with_write = self._show_due_figures
        self._figures_due = False
        if self._enter_hold is not None:
            writer.on_first_text = self._enter_hold.release
        runner = RequestRunner(self.client, request, writer, self.network)
        runner.start()  # the request is on its way before any widget is built
        runner.chat_id = self.session.chat_id
        runner.conversation = self.session.conversation
        chat = self.query_one(ChatLog)
        view = chat.next_reply(len(self.session.messages), self.session.model)
        writer.markdown = view.markdown
        self.runner = runner
        return runner, view

    @work(exclusive=True, group="request")
    async def _await_reply(self, started: tuple[RequestRunner, AssistantMessage] | None) -> None:
        self.collector.pause()
        try:
            await self._reply(started)
        finally:
            self._request_active = False
            self.collector.resume()

    async def _reply(self, started: tuple[RequestRunner, AssistantMessage] | None) -> None:
        if started is None:
            # Enter came before the warm-up finished: wait for it (only right after start).
            while self.client is None:
                await self._sleep(0.01)
            started = self._begin_request()
        runner, view = started
        chat = self.query_one(ChatLog)
        prompt = self.query_one(PromptInput)
        blink = prompt.cursor_blink
        prompt.set_blinking(False)  # a blinking cursor is two extra frames a second
        mounted = chat.show_reply(view)
        view.set_status("waiting for the first token…", live=True)
        self._streaming_view = view
        # The panel's waiting figures follow Enter's frame instead of joining it: that frame
        # is held for the first words (EnterFrameHold), and the panel's rows were a third
        # of its rendering. The panel is a frame later; the first words are sooner.
        if self._enter_hold is not None:
            self._enter_hold.after_frame(self._tick)
        else:
            self._tick()
        try:
            finished = await runner.run(ready=mounted)
        except Exception as error:  # the engine promises Finished; never let the app die
            if runner.state.finished is not None:  # the request ended; showing it failed
                finished = runner.state.finished
                self._save_reply(runner, finished.record, finished.text)
            view.remove()
            chat.add_error("unexpected", f"{type(error).__name__}: {error}")
            self.runner = None
            return
        finally:
            prompt.set_blinking(blink)
            self._streaming_view = None
            self._release_enter_hold()
        if runner.conversation != self.session.conversation or not view.is_attached:
            # Another conversation is on screen now (or the app is closing): nothing left to
            # show, but the record and what arrived still belong to the chat the request was
            # sent from. (The old view may not be unmounted yet: it cannot tell.)
            self._save_reply(runner, finished.record, finished.text)
            return
        await self._finished(runner, view, finished)

    def _warn(self, message: str) -> None:
        self.notify(message, severity="warning")

    def _release_enter_hold(self) -> None:
        hold, self._enter_hold = self._enter_hold, None
        if hold is not None:
            hold.release()

    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def _finished(
        self, runner: RequestRunner, view: AssistantMessage, finished: Finished
    ) -> None:
        record = finished.record
        if self.record_hook is not None:
            record = self.record_hook(record)
        self.last_record = record
        chat = self.query_one(ChatLog)
        text = finished.text
        status = record.status
        if text:
            view.message_index = self.session.add_assistant(text)
            view.set_status(self._reply_status(record))
            if status != RequestStatus.OK:
                view.add_class(f"-{status.value}")
        elif status == RequestStatus.CANCELLED:
            # Nothing arrived: keep a marker (not part of the conversation sent next time).
            view.message_index = None
            view.add_class("-cancelled")
            view.set_status(self._reply_status(record))
            await view.markdown.update("*cancelled before the first token*")
        else:
            await view.remove()
        if status in (RequestStatus.ERROR, RequestStatus.STALLED, RequestStatus.ENDED_EARLY):
            chat.add_error(record.error_kind or status.value, record.error_message or status.value)
        panel = self.query_one(LatencyPanel)
        panel.show_record(record)
        sample = TtftSample.of(record)
        if sample is not None:
            panel.add_sample(sample)
        self._save_reply(runner, record, text)
        self._update_preview()
        # The reply's last words are on screen already: the next turn's blocks are mounted
        # now, so the record's layout places them too (one layout and frame fewer a reply).
        chat.prepare_turn()

    def _prepare_turn(self) -> None:
        """After the frame in hand: the next Enter's blocks, mounted hidden while idle."""
        chat = self.query_one_optional(ChatLog)
        if chat is not None:
            self.call_after_refresh(chat.prepare_turn)

    def _reply_status(self, record: RequestRecord) -> str:
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

    def _save_reply(self, runner: RequestRunner, record: RequestRecord, text: str) -> None:
        if not runner.saved:  # once: a closing app may get here twice
            runner.saved = True
            self.history.reply_done(runner.chat_id, record, text)

    # -- actions -----------------------------------------------------------------------------

    def action_cancel(self) -> None:
        if self.busy and self.runner is not None:
            self.runner.cancel()

    def action_toggle_trimming(self) -> None:
        self.session.trim_enabled = not self.session.trim_enabled
        self._show_switches()
        self._update_preview()
        state = "on" if self.session.trim_enabled else "off"
        self.notify(f"trimming {state} for the next request", timeout=2)

    def action_toggle_streaming(self) -> None:
        self.session.streaming = not self.session.streaming
        self._show_switches()
        state = "on" if self.session.streaming else "off"
        self.notify(f"streaming {state} for the next request", timeout=2)

    def action_budget(self, steps: int) -> None:
        self.session.change_budget(steps)
        self._show_switches()
        self._update_preview()

    def action_retry(self) -> None:
        if self.busy:
            return
        if self.query_one(ChatLog).replacing:  # as in submit: after that chat's blocks
            self._once_shown(self.action_retry)
            return
        prompt = self.session.drop_last_reply()
        if prompt is None:
            self.notify("nothing to retry yet", severity="warning")
            return
        self.query_one(ChatLog).remove_last_turn_replies()
        self.history.past_changed(create=True)  # before the request: its record names the chat
        self._request_active = True
        started = self._begin_request() if self.client is not None else None
        self._await_reply(started)

    async def action_new_chat(self) -> None:
        if self.busy and self.runner is not None:
            self.runner.cancel()
        system = self.session.system_prompt
        self.last_record = None
        if not await self.load_messages([{"role": "system", "content": system}] if system else []):
            return  # another chat was opened meanwhile: the panel is its
        self.query_one(LatencyPanel).clear_history()
        self._refresh_panel()

    def action_open_chat(self) -> None:
        from tui.app.screens.chat_picker import ChatPicker

        chats = self.history.chats()
        if chats is None:
            return
        if not chats:
            self.notify("no saved chats yet: a chat is saved when its first message is sent")
            return
        self.push_screen(ChatPicker(chats, self.session.chat_id), self._open_chat)

    async def _open_chat(self, chat_id: int | None) -> None:
        if chat_id is None or chat_id == self.session.chat_id:
            return
        saved = self.history.chat(chat_id)
        if saved is None:
            return
        if self.busy and self.runner is not None:
            self.runner.cancel()  # its record is filed under the chat it was sent from
        # Each reply shows its model and figures again, as it did when it arrived.
        notes = {
            index: (record.model, self._reply_status(record))
            for index, record in saved.reply_records().items()
        }
        if not await self.load_messages(saved.messages, reply_notes=notes, chat_id=chat_id):
            return
        self.last_record = saved.records[-1] if saved.records else None
        panel = self.query_one(LatencyPanel)
        panel.clear_history()
        for record in saved.records[-HISTORY_LENGTH:]:
            sample = TtftSample.of(record)
            if sample is not None:
                panel.add_sample(sample)
        self._refresh_panel()

    async def action_load_sample(self) -> None:
        if self.busy:
            return
        from tui.app.sample_conversation import bloated_sample

        await self.load_messages(bloated_sample())
        self.notify(
            "bloated sample loaded: enter sends it; ctrl+t toggles trimming, f5 sends it again"
        )

    async def load_messages(
        self,
        messages: list[dict[str, Any]],
        reply_notes: dict[int, tuple[str, str]] | None = None,
        chat_id: int | None = None,
    ) -> bool:
        """Show this conversation (a saved chat's when `chat_id` is given: what is sent next
        is added to it); False if another was loaded before it was on screen."""
        self.session.start_over(messages)
        self.session.chat_id = chat_id
        conversation = self.session.conversation
        await self.query_one(ChatLog).show_messages(self.session.messages, reply_notes)
        if self.session.conversation != conversation:
            return False
        self._update_preview()
        self._prepare_turn()
        return True

    def action_switch_model(self) -> None:
        from tui.app.screens.model_picker import ModelPicker

        self.push_screen(ModelPicker(self.models, self.session.model), self._set_model)

    def _set_model(self, model: str | None) -> None:
        if not model or model == self.session.model:
            return
        self.session.model = model
        if self.remember:
            self.preferences.last_model = model
            self.preferences.save()
        self.sub_title = self._endpoint_label()
        self.query_one(LatencyPanel).show_endpoint(model, self._host(), self.simulated)
        self._load_counter(model)
        self.notify(f"model: {model}", timeout=2)

    @work(thread=True, exclusive=True, group="counter")
    def _load_counter(self, model: str) -> None:
        """Another model may use another vocabulary (~0.3 s to load): off the UI thread."""
        from tui.engine.tokens import get_counter

        counter = get_counter(model).load()
        self.call_from_thread(self._use_counter, model, counter)

    def _use_counter(self, model: str, counter: TokenCounter) -> None:
        if model == self.session.model:
            self.counter = counter
            self._update_preview()

    def action_switch_theme(self) -> None:
        self.action_change_theme()

    def action_copy_reply(self) -> None:
        reply = self._last_reply_text()
        if reply is None:
            self.notify("no reply to copy yet", severity="warning")
            return
        self.copy_to_clipboard(reply)
        self.notify(f"copied the last reply ({len(reply):,} characters)", timeout=2)

    def action_copy_code(self) -> None:
        from tui.app.code_blocks import last_code_block

        reply = self._last_reply_text()
        code = last_code_block(reply) if reply else None
        if code is None:
            self.notify("the last reply has no code block", severity="warning")
            return
        self.copy_to_clipboard(code)
        self.notify(f"copied the last code block ({len(code.splitlines())} lines)", timeout=2)

    def _last_reply_text(self) -> str | None:
        for message in reversed(self.session.messages):
            if message.get("role") == "assistant" and message.get("content"):
                return str(message["content"])
        return None

    def action_system_prompt(self) -> None:
        from tui.app.screens.system_prompt import SystemPromptScreen

        self.push_screen(SystemPromptScreen(self.session.system_prompt or ""), self._set_system)

    def _set_system(self, text: str | None) -> None:
        if text is None:
            return
        self.session.set_system_prompt(text.strip())
        self.history.past_changed()
        self.call_later(self._reload_chat)

    async def _reload_chat(self) -> None:
        await self.query_one(ChatLog).show_messages(self.session.messages)
        self._update_preview()
        self._prepare_turn()

    def action_toggle_panel(self) -> None:
        visible = not self.query_one(LatencyPanel).display
        self._panel_forced = visible
        self._set_panel(visible)
        if self.remember:
            self.preferences.side_panel_collapsed = not visible
            self.preferences.save()

    def _set_panel(self, visible: bool) -> None:
        self.query_one(LatencyPanel).display = visible

    def on_resize(self, event: events.Resize) -> None:
        # The event's size, not self.size: the app's own size is updated after this handler,
        # so it still holds the size before the resize.
        forced = self._panel_forced
        self._set_panel(event.size.width >= NARROW_WIDTH if forced is None else forced)

    def action_scroll_chat(self, pages: int) -> None:
        """Page the chat from anywhere (the prompt keeps the focus); paging back down to the
        end follows the chat again."""
        chat = self.query_one_optional(ChatLog)
        if chat is None:
            return
        if pages < 0:
            chat.scroll_page_up(animate=False)
        else:
            chat.scroll_page_down(animate=False)

    def action_redraw(self) -> None:
        """Repaint every cell: the app paints only what changed, so text another program
        wrote into the terminal would otherwise stay until something covers it."""
        repaint_everything(self.screen)

    def action_help(self) -> None:
        from tui.app.screens.help import HelpScreen

        self.push_screen(HelpScreen(HELP_ENTRIES, title="firsttoken keys"))

    # -- the command palette: every binding, by its id -------------------------------------

    def get_default_screen(self) -> Screen:
        return ChatScreen()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for command in PALETTE_COMMANDS:
            action = getattr(self, f"action_{command.action}")
            callback = partial(action, *command.args) if command.args else action
            yield SystemCommand(command.title, command.help, callback)
        yield from super().get_system_commands(screen)

    def action_send(self) -> None:
        self.query_one(PromptInput).action_submit()

    async def on_unmount(self) -> None:
        if self._preview_timer is not None:
            self._preview_timer.stop()
        if self.prompt_history is not None:
            self.prompt_history.save()  # a prompt sent just before quitting
        runner = self.runner
        if runner is not None and not runner.saved:
            # Quitting mid-reply: the reply is cancelled and its record and partial text
            # kept, as Esc would (the request worker is being cancelled with the app).
            finished = await runner.stop(timeout_s=1.0)
            if finished is not None:
                self._save_reply(runner, finished.record, finished.text)
        if self.client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.network.call(self.client.aclose()), 1.0)
        self.network.stop()
        self._endpoint_stack.close()  # stops the demo server if the warm-up started one
