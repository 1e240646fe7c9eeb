"""The chat screen: the chat pane, the prompt and the live latency panel, and the chat's keys.

A reply repaints only its new rows (the render seam's RenderScreen), and the prompt has the
focus from the screen's first moment: keys typed while the app starts are read before
`on_mount` runs, and would go to the first focusable widget (the chat log) and be lost.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import ActiveBinding, BindingType
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Footer, Header, TextArea

from tui.app.chat.chat_log import ChatLog
from tui.app.chat.model_choice import (
    CHAT,
    CONFIGURED,
    PICKED,
    REMEMBERED,
    ModelChoice,
    endpoint_key,
    unlisted_notice,
)
from tui.app.chat.prompt_input import PromptInput
from tui.app.chat.reply_turn import PANEL_TICK_S, ReplyTurn, reply_status
from tui.app.keymap import CHAT_BINDINGS
from tui.app.panel.budget_gauge import BudgetFigures
from tui.app.panel.latency_panel import LatencyPanel
from tui.app.panel.panel_fit import PanelFit
from tui.app.panel.sent_prompt import sent_prompt
from tui.app.panel.ttft_history import HISTORY_LENGTH, TtftSample
from tui.app.render import RenderScreen
from tui.app.untrusted import (
    saved_reply_notes,
    shown,
    shown_host,
    shown_line,
    shown_messages,
)
from tui.session.counts import candidate_messages

if TYPE_CHECKING:
    from tui.app.preferences import Preferences, PromptHistory
    from tui.config import Config
    from tui.engine.metrics.record import RequestRecord
    from tui.engine.tokens.counter import TokenCounter
    from tui.session.chat import Chat
    from tui.session.chat_state import TrimPreview
    from tui.session.engine_link import EngineLink

NARROW_WIDTH = 100  # below this many columns the side panel starts collapsed
PANEL_KEY = "f10"  # the footer's key for the hidden panel
FOOTER_ROWS = 1
PREVIEW_DEBOUNCE_S = 0.15


def host_label(engine: EngineLink, config: Config) -> str:
    """The endpoint's host:port as the panel and the title show it."""
    if engine.endpoint is None:
        if config.base_url is None:
            return "demo endpoint (starting…)"
        return shown_host(config.base_url)
    return shown_host(engine.endpoint.base_url)


class ChatScreen(RenderScreen):
    AUTO_FOCUS = "#prompt"
    BINDINGS: ClassVar[list[BindingType]] = list(CHAT_BINDINGS)

    def __init__(
        self,
        *,
        config: Config,
        chat: Chat,
        preferences: Preferences,
        prompt_history: PromptHistory | None,
        resume_chat: int | None = None,
    ) -> None:
        super().__init__()
        self.config = config
        self.chat = chat
        self.state = chat.state
        self.engine = chat.engine
        self.preferences = preferences
        self.prompt_history = prompt_history
        self._resume_chat = resume_chat  # a saved chat to open once the first frame is out
        self.turn: ReplyTurn | None = None  # once its widgets are mounted
        self.preview: TrimPreview | None = None
        self.last_record: RequestRecord | None = None
        self._preview_timer: Timer | None = None
        # The user's F10 beats the width rule, for terminals of that width class.
        self.panel_fit = PanelFit(NARROW_WIDTH, preferences.side_panel)
        self.mounted = asyncio.Event()  # its widgets are there and the prompt has the focus

    @property
    def busy(self) -> bool:
        return self.turn is not None and self.turn.busy

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
        self.app.sub_title = self.endpoint_label()
        panel = self.query_one(LatencyPanel)
        panel.show_idle()
        self._show_endpoint()
        self._show_switches()
        panel.show_prompt(None, False)
        self.fit_panel(self.app.size.width)
        self.call_after_refresh(panel.fill)  # its widgets come right after the first frame
        log = self.query_one(ChatLog)
        if self.state.messages:
            log.add_messages(shown_messages(self.state.messages))
        prompt = self.query_one(PromptInput)
        self.turn = ReplyTurn(
            self.app, self.chat, log, prompt, panel, self.prompt_history, self._reply_finished
        )
        # On the app, as the reply's workers: the screen's own queue carries its frames.
        self.app.set_interval(PANEL_TICK_S, self.turn.tick)
        prompt.on_submit = self.turn.submit
        prompt.focus()
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        if self._resume_chat is not None:
            self.call_after_refresh(self.open_chat, self._resume_chat)
        self.mounted.set()

    @property
    def simulated(self) -> bool:
        if self.engine.endpoint is None:
            return self.config.uses_demo_endpoint
        return self.engine.endpoint.simulated

    def endpoint_label(self) -> str:
        # "simulated" first: a narrow terminal cuts the title's end, and with the panel
        # collapsed the title is what says the figures are simulated.
        simulated = "simulated · " if self.simulated else ""
        model = shown_line(self.state.model)
        return f"{simulated}{model} · {shown_line(host_label(self.engine, self.config))}"

    def engine_opened(self) -> None:
        """The engine is open (start-up): the endpoint's real address, the trim preview."""
        self.app.sub_title = self.endpoint_label()
        self._refresh_panel()
        self.update_preview()

    def start_up_settled(self) -> None:
        """Start-up is over: the next Enter's blocks (not under a reply that came first)."""
        self.check_model()  # the endpoint has listed its models by now
        if not self.busy:
            self.prepare_turn()
        self.update_preview()  # connected: a tokenizer found in an earlier run can count now

    def _theme_changed(self, _theme: object) -> None:
        # Rich styles in the panel captured the old colours: re-render them once.
        self.query_one(LatencyPanel).restyle()
        self._refresh_panel()

    # -- the panel -------------------------------------------------------------------------

    def _show_endpoint(self) -> None:
        host = host_label(self.engine, self.config)
        model = shown_line(self.state.model)
        self.query_one(LatencyPanel).show_endpoint(model, shown_line(host), self.simulated)

    def _show_switches(self) -> None:
        s = self.state
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
            return  # the app is closing (start-up can end after the screen is gone)
        if self.last_record is not None:
            panel.show_record(self.last_record)
        else:
            panel.show_idle()
        self._show_endpoint()
        self._show_switches()
        self._show_preview()
        panel.refresh_history()

    def on_prompt_input_height_changed(self, event: PromptInput.HeightChanged) -> None:
        # Toasts stack above the prompt and the footer (app.tcss sets it for a one-line one).
        rack = self.query_one_optional("ToastRack")  # Textual's own widget, by its CSS type
        if rack is not None:
            rack.styles.margin = (0, 0, event.height + FOOTER_ROWS, 0)

    # -- the trim preview ------------------------------------------------------------------

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if not isinstance(event.text_area, PromptInput):
            return
        if self._preview_timer is not None:
            self._preview_timer.stop()
        self._preview_timer = self.app.set_timer(PREVIEW_DEBOUNCE_S, self.update_preview)

    def update_preview(self) -> None:
        prompt = self.query_one_optional(PromptInput)
        if self.engine.counter is None or prompt is None:
            return  # the engine is not ready yet, or the app is closing (a late debounce timer)
        counts = self.chat.counts
        self.preview = counts.preview(self.state, prompt.text)
        self._show_preview()
        # The server's tokenizer is probed once a request has been answered (never before).
        messages = candidate_messages(self.state, prompt.text)
        if counts.wanted(messages, may_probe=self.last_record is not None):
            self._count_exactly(messages)

    def _count_exactly(self, messages: list[dict[str, Any]]) -> None:
        """Have the server count the next request's messages, off the UI thread, and show
        the preview again once it has counted every one; a newer draft's count replaces one
        still under way."""

        async def count() -> None:
            if await self.chat.counts.learn(messages):
                self.update_preview()

        # The function, not a coroutine: a worker cancelled before it starts never makes one
        # (Textual types an async function's coroutine as Coroutine[None, None, T]).
        self.app.run_worker(
            count,  # type: ignore[arg-type]
            group="exact-counts",
            exclusive=True,
            exit_on_error=False,
        )

    def _reply_finished(self, record: RequestRecord) -> None:
        self.last_record = record
        self.update_preview()

    def _show_preview(self) -> None:
        preview = self.preview
        if preview is None:
            return
        panel = self.query_one(LatencyPanel)
        self.query_one(ChatLog).mark_dropped(set(preview.dropped_indices))
        sent = sent_prompt(self.last_record)
        panel.show_prompt(
            preview.tokens_after,
            preview.exact,
            actual=sent.tokens if sent is not None else None,
            actual_source=sent.source if sent is not None else "",
            actual_exact=sent.exact if sent is not None else True,
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

    def prepare_turn(self) -> None:
        """After the frame in hand: the next Enter's blocks, mounted hidden while idle."""
        chat = self.query_one_optional(ChatLog)
        if chat is not None:
            self.call_after_refresh(chat.prepare_turn)

    # -- conversations -----------------------------------------------------------------------

    async def load_messages(
        self,
        messages: list[dict[str, Any]],
        reply_notes: dict[int, tuple[str, str]] | None = None,
        chat_id: int | None = None,
    ) -> bool:
        """Show this conversation (a saved chat's when `chat_id` is given: what is sent next
        is added to it); False if another was loaded before it was on screen."""
        self.state.start_over(messages, reply_notes)
        self.state.chat_id = chat_id
        conversation = self.state.conversation
        shown_now = shown_messages(self.state.messages)
        await self.query_one(ChatLog).show_messages(shown_now, reply_notes)
        if self.state.conversation != conversation:
            return False
        self.update_preview()
        self.prepare_turn()
        return True

    async def open_chat(self, chat_id: int | None) -> None:
        """Show a saved chat, to carry on in it (None: nothing chosen)."""
        if chat_id is None or chat_id == self.state.chat_id:
            return
        saved = self.chat.history.chat(chat_id)
        if saved is None:
            return
        self.action_cancel()  # its record is filed under the chat it was sent from
        # Each reply shows its model and figures again, as it did when it arrived.
        notes = saved_reply_notes(saved, reply_status)
        if not await self.load_messages(saved.messages, reply_notes=notes, chat_id=chat_id):
            return
        if saved.records and saved.records[-1].model != self.state.model:
            self.use_model(saved.records[-1].model, CHAT)  # the chat goes on with its model
            if self.engine.connected:
                self.check_model()
        self.last_record = saved.records[-1] if saved.records else None
        panel = self.query_one(LatencyPanel)
        panel.clear_history()
        for record in saved.records[-HISTORY_LENGTH:]:
            sample = TtftSample.of(record)
            if sample is not None:
                panel.add_sample(sample)
        self._refresh_panel()

    # -- actions -----------------------------------------------------------------------------

    def action_send(self) -> None:
        self.query_one(PromptInput).action_submit()

    def action_cancel(self) -> None:
        if self.turn is not None:
            self.turn.cancel()

    def action_retry(self) -> None:
        if self.turn is not None:
            self.turn.retry()

    def action_toggle_trimming(self) -> None:
        self.state.trim_enabled = not self.state.trim_enabled
        self._show_switches()
        self.update_preview()
        state = "on" if self.state.trim_enabled else "off"
        self.notify(f"trimming {state} for the next request", timeout=2)

    def action_toggle_streaming(self) -> None:
        self.state.streaming = not self.state.streaming
        self._show_switches()
        state = "on" if self.state.streaming else "off"
        self.notify(f"streaming {state} for the next request", timeout=2)

    def action_budget(self, steps: int) -> None:
        self.state.change_budget(steps)
        self._show_switches()
        self.update_preview()

    async def action_new_chat(self) -> None:
        self.action_cancel()
        kept, notice = self.state.new_chat_start(self.engine.counter)
        if await self._start_afresh(kept):
            self.notify(notice, timeout=4)

    async def _start_afresh(self, messages: list[dict[str, Any]]) -> bool:
        """Show a new conversation with a clean panel: its TTFTs and the last-two comparison
        are its own requests only. False if another chat was opened meanwhile."""
        self.last_record = None
        if not await self.load_messages(messages):
            return False  # the panel is the other chat's
        self.query_one(LatencyPanel).clear_history()
        self._refresh_panel()
        return True

    def action_open_chat(self) -> None:
        from tui.app.screens.chat_picker import ChatPicker
        from tui.app.screens.saved_chats import SavedChats

        history = self.chat.history
        if history.chats(limit=1) is None:
            return  # not kept, or not readable: said already
        if not history.counts():
            self.notify("no saved chats yet: a chat is saved when its first message is sent")
            return
        picker = ChatPicker(SavedChats(history), self.state.chat_id)
        self.app.push_screen(picker, self.open_chat)

    async def action_load_sample(self) -> None:
        if self.busy:
            self.notify(
                "a reply is still streaming: esc cancels it, then f6 loads the sample",
                severity="warning",
            )
            return
        from tui.sample_conversation import bloated_sample

        # The trimming demo starts afresh: its comparison is of the sample's own sends.
        if not await self._start_afresh(bloated_sample()):
            return
        self.notify(
            "bloated sample loaded: enter sends it; ctrl+t toggles trimming, f5 sends it again."
            " Each send goes cold (a fresh tag opens it), so the order does not matter"
        )

    def action_switch_model(self) -> None:
        from tui.app.screens.model_picker import ModelPicker

        self.app.push_screen(ModelPicker(self.engine.models, self.state.model), self._set_model)

    def _set_model(self, model: str | None) -> None:
        if not model or model == self.state.model:
            return
        self.use_model(model, PICKED)
        # For this endpoint only: the model belongs to it.
        self.preferences.remember_model(endpoint_key(self.config), model)
        self.preferences.save()
        self.notify(f"model: {model}", timeout=2)

    def use_model(self, model: str, source: str) -> None:
        """Send with `model` from now on: the header, the panel and the token count follow."""
        self.state.model, self.state.model_source = model, source
        self.app.sub_title = self.endpoint_label()
        self._show_endpoint()
        self._load_counter(model)

    def check_model(self) -> None:
        """A model the user did not set (remembered, or a reopened chat's) that the endpoint
        does not list is not used silently: say so, and use the configured one."""
        choice = ModelChoice(self.state.model, self.state.model_source)
        notice = unlisted_notice(choice, self.engine.listed_models, self.config.model)
        if notice is None:
            return
        if choice.source == REMEMBERED:
            self.preferences.forget_model(endpoint_key(self.config))
            self.preferences.save()
        self.use_model(self.config.model, CONFIGURED)
        self.notify(notice, title="model", severity="warning", timeout=10)

    @work(thread=True, exclusive=True, group="counter")
    def _load_counter(self, model: str) -> None:
        """Another model may use another vocabulary, too slow to load on the UI thread."""
        from tui.engine.tokens.counter import get_counter

        counter = get_counter(model).load()
        self.app.call_from_thread(self._use_counter, model, counter)

    def _use_counter(self, model: str, counter: TokenCounter) -> None:
        if model == self.state.model:
            self.engine.counter = counter
            self.update_preview()

    def action_statistics(self) -> None:
        from tui.app.screens.chat_records import open_statistics
        from tui.engine.chat.client import endpoint_host

        # The endpoint as its records name it: the one opened at start, or before it is open
        # (a loaded machine, a demo server still starting) the one configured.
        endpoint = self.engine.endpoint
        if endpoint is not None:
            host, simulated = endpoint_host(endpoint.base_url), endpoint.simulated
        elif self.config.base_url is not None:
            host, simulated = endpoint_host(self.config.base_url), False
        else:
            host, simulated = "", self.config.uses_demo_endpoint
        open_statistics(self.app, self.chat.history, self.state.model, host, simulated)

    def action_export_chat(self, as_json: int = 0) -> Path | None:
        """The open chat to a file in the working folder (the palette's two exports)."""
        from tui.app.screens.chat_records import export_chat

        return export_chat(
            self.notify, self.chat.history, self.state.chat_id, bool(as_json), Path.cwd()
        )

    def action_race(self) -> None:
        """Race this chat's conversation against another model, endpoint or setting."""
        from tui.app.screens.race_prompt import RacePromptScreen

        if self.busy:
            self.notify("a reply is still streaming: esc cancels it", severity="warning")
            return
        suggestion = "trim=off" if self.state.trim_enabled else "trim=on"
        prompt = RacePromptScreen(shown_line(self.state.model), suggestion)
        self.app.push_screen(prompt, self._race_against)

    def _race_against(self, typed: str | None) -> None:
        from tui.app.race.start import against_this_chat
        from tui.race_targets import TargetError

        if typed is None:
            return
        try:
            targets = against_this_chat(self.state, typed)
        except TargetError as problem:
            self.notify(str(problem), severity="error", timeout=8)
            return
        self.app.start_race(targets, list(self.state.messages))  # type: ignore[attr-defined]

    def action_toggle_reasoning(self) -> None:
        """Open or close the thinking of the latest reply that has any."""
        for view in reversed(self.query_one(ChatLog).replies()):
            if view.reasoning is not None:
                view.reasoning.toggle()
                return
        self.notify("no reply with thinking yet", timeout=2)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The thinking's key is in the footer while the chat has thinking to show (a
        # reasoning block refreshes the footer when it comes and goes).
        if action == "toggle_reasoning":
            chat = self.query_one_optional(ChatLog)
            return chat is not None and any(v.reasoning is not None for v in chat.replies())
        return True

    def action_copy_reply(self) -> None:
        reply = self._last_reply_text()
        if reply is None:
            self.notify("no reply to copy yet", severity="warning")
            return
        reply = shown(reply)  # what the user saw, never a hidden escape sequence
        self.app.copy_to_clipboard(reply)
        self.notify(f"copied the last reply ({len(reply):,} characters)", timeout=2)

    def action_copy_code(self) -> None:
        from tui.app.chat.code_blocks import last_code_block

        reply = self._last_reply_text()
        code = last_code_block(shown(reply)) if reply else None
        if code is None:
            self.notify("the last reply has no code block", severity="warning")
            return
        self.app.copy_to_clipboard(code)
        self.notify(f"copied the last code block ({len(code.splitlines())} lines)", timeout=2)

    def _last_reply_text(self) -> str | None:
        for message in reversed(self.state.messages):
            if message.get("role") == "assistant" and message.get("content"):
                return str(message["content"])
        return None

    def action_system_prompt(self) -> None:
        from tui.app.screens.system_prompt import SystemPromptScreen

        prompt = SystemPromptScreen(shown(self.state.system_prompt or ""))
        self.app.push_screen(prompt, self._set_system)

    def _set_system(self, text: str | None) -> None:
        if text is None:
            return
        self.state.set_system_prompt(text.strip())
        self.chat.history.past_changed()
        self.call_later(self._reload_chat)

    async def _reload_chat(self) -> None:
        # The replies keep their model and figures (ChatSession.reply_notes).
        await self.query_one(ChatLog).show_messages(
            shown_messages(self.state.messages), self.state.reply_notes
        )
        self.update_preview()
        self.prepare_turn()

    def action_toggle_panel(self) -> None:
        panel = self.query_one(LatencyPanel)
        self._show_panel(panel, self.panel_fit.toggle(self.app.size.width, panel.display))
        self.preferences.side_panel = dict(self.panel_fit.chosen)
        self.preferences.save()

    def fit_panel(self, width: int) -> None:
        """The terminal is `width` columns wide now: the panel shows if it fits, unless the
        user chose on a terminal of this width class."""
        panel = self.query_one_optional(LatencyPanel)
        if panel is not None:
            self._show_panel(panel, self.panel_fit.visible(width))

    def _show_panel(self, panel: LatencyPanel, visible: bool) -> None:
        if panel.display != visible:
            panel.display = visible
            self.refresh_bindings()  # the footer names F10 while the panel is hidden

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """The keys the footer shows: while the panel is hidden, F10 comes first, so a hidden
        panel always says how to bring it back."""
        bindings = super().active_bindings
        panel = self.query_one_optional(LatencyPanel)
        key = bindings.get(PANEL_KEY)
        if panel is None or panel.display or key is None:
            return bindings
        binding = dataclasses.replace(key.binding, show=True)
        shown = ActiveBinding(key.node, binding, key.enabled, key.tooltip)
        return {PANEL_KEY: shown, **{k: v for k, v in bindings.items() if k != PANEL_KEY}}

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
