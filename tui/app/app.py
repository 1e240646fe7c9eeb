"""FirstTokenApp: the chat screen over the engine, with themes, help and the command palette.

Start-up stays quick by importing nothing heavy here: the engine (its HTTP client, the token
counter's vocabulary) is opened by a thread once the first frame is out (StartUp), so the
keep-alive connection is open before the first Enter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.app import App, SystemCommand
from textual.binding import BindingType
from textual.screen import Screen
from textual.worker import WorkerFailed

from tui.app.chat.model_choice import starting_model
from tui.app.keymap import APP_BINDINGS, HELP_ENTRIES, PALETTE_COMMANDS
from tui.app.race.start import RaceAtStart, RaceOpener
from tui.app.render import notices, repaint_everything
from tui.app.screens.chat_screen import ChatScreen
from tui.app.start_up import StartUp
from tui.app.untrusted import shown, shown_line
from tui.config import ConfigFlags
from tui.session.chat import Chat
from tui.session.chat_state import ChatState
from tui.session.engine_link import EngineLink
from tui.session.history import ChatHistory
from tui.session.network import NetworkLoop

if TYPE_CHECKING:
    from tui.app.preferences import Preferences, PromptHistory
    from tui.config import Config
    from tui.engine.store.database import Store
    from tui.race_targets import RaceTarget
    from tui.wiring import Endpoint


class FirstTokenApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "firsttoken"

    BINDINGS: ClassVar[list[BindingType]] = list(APP_BINDINGS)

    def __init__(
        self,
        config: Config,
        open_endpoint: Callable[[], AbstractContextManager[Endpoint]],
        *,
        preferences: Preferences,
        prompt_history: PromptHistory | None,
        messages: list[dict[str, Any]] | None = None,
        store: Store | None = None,
        resume_chat: int | None = None,
        flags: ConfigFlags | None = None,
        race: RaceAtStart | None = None,
        history_problem: str | None = None,
    ) -> None:
        super().__init__()
        self.config = config
        self.preferences = preferences
        self.prompt_history = prompt_history  # None: no recall, nothing written
        state = ChatState.from_config(config, messages)
        # The model set, else the one picked last time on this endpoint (chat/model_choice.py).
        choice = starting_model(config, self.preferences)
        state.model, state.model_source = choice.model, choice.source
        history = ChatHistory(store, state, self._warn, self._history_unsaved)
        self._history_problem = history_problem  # why the history file could not be opened
        models = list(config.models) or [config.model]
        engine = EngineLink(open_endpoint, models, NetworkLoop())
        self.chat = Chat(state, history, engine)
        self.races = RaceOpener(config, flags or ConfigFlags(), self.chat)
        self._race_at_start = race  # `firsttoken --race A B`: opened once start-up is over
        self._chat = ChatScreen(
            config=config,
            chat=self.chat,
            preferences=self.preferences,
            prompt_history=self.prompt_history,
            resume_chat=resume_chat,
        )
        self.start_up = StartUp(
            self,
            config,
            engine,
            model=lambda: state.model,
            on_engine=self._chat.engine_opened,
            on_settled=self._start_up_settled,
        )
        self._notices_shown = 0
        self.ended_by: int | None = None  # the signal that ended the app (signals.py)
        self.unsaved_at_exit: str | None = None  # a history save that failed as it closed
        self._theme_errors = self._load_themes()

    @property
    def chat_screen(self) -> ChatScreen:
        return self._chat

    @property
    def endpoint_notice(self) -> str | None:
        """What the demo endpoint said when it started (printed again after the app ends)."""
        return self.chat.engine.endpoint.notice if self.chat.engine.endpoint else None

    def get_default_screen(self) -> Screen[Any]:
        return self._chat

    async def on_mount(self) -> None:
        # Keys typed while the app starts are queued after this: they are handled once the
        # chat screen has composed itself and focused the prompt (else they would be lost).
        await self._chat.mounted.wait()
        if self._history_problem:
            self._history_unsaved(self._history_problem)
        for error in self._theme_errors:
            self.notify(error, title="theme", severity="warning", timeout=8)
        for warning in self.config.warnings:
            self.notify(warning, title="config", severity="warning", timeout=10)
        self._show_render_notices()
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        # After the first frame: the heavy imports must not delay the first paint (GIL).
        self.call_after_refresh(self.start_up.begin)

    def _show_render_notices(self) -> None:
        """What the render seam has to say (stock rendering, and why), each once."""
        for notice in notices()[self._notices_shown :]:
            self.notify(notice, title="render", severity="warning", timeout=10)
        self._notices_shown = len(notices())

    def _start_up_settled(self) -> None:
        self._show_render_notices()  # the reply's Markdown is checked during start-up
        self._chat.start_up_settled()
        if self._race_at_start is not None:
            targets, together, cold = self._race_at_start
            self._race_at_start = None
            self.start_race(targets, list(self.chat.state.messages), together=together, cold=cold)

    # -- races -------------------------------------------------------------------------------

    def start_race(
        self,
        targets: Sequence[RaceTarget],
        messages: list[dict[str, Any]],
        *,
        together: bool = False,
        cold: bool = True,
    ) -> None:
        """Open the race's lanes (a thread), then its screen over the chat."""

        async def opening() -> None:
            from tui.app.race.race_screen import RaceScreen

            worker = self.run_worker(
                partial(
                    self.races.lanes,
                    targets,
                    messages,
                    together=together,
                    cold=cold,
                    notice=self._notice_from_thread,
                ),
                thread=True,
                group="race-open",
                exit_on_error=False,
            )
            try:
                race = await worker.wait()
            except WorkerFailed as failure:
                self.notify(f"cannot start the race: {failure.error}", severity="error")
                return
            self.push_screen(RaceScreen(race, self.config.thresholds(), cold=cold))

        self.run_worker(opening(), group="race-start", exclusive=True)

    def _notice_from_thread(self, message: str) -> None:
        self.call_from_thread(self.notify, message, timeout=6)

    def on_resize(self, event: events.Resize) -> None:
        # The event's size, not self.size: the app's own size is updated after this handler.
        self._chat.fit_panel(event.size.width)

    def end_on_signals(self) -> None:
        """SIGTERM and SIGHUP quit as Ctrl+Q does (the CLI's run; never in tests)."""
        from tui.app.signals import end_on_signals

        end_on_signals(self)

    def save_drafts_soon(self) -> None:
        """Have the replies under way saved at once (signal-safe: the saver thread does it)."""
        self.chat.history.save_drafts_soon()

    def _warn(self, message: str) -> None:
        self.notify(message, severity="warning")

    def _history_unsaved(self, problem: str) -> None:
        """In the chat, for as long as the app runs: a toast fades, stderr hides behind it.
        A save that fails as the app closes is kept for the command to print after it."""
        from tui.app.chat.history_warning import PREFIX, show_history_problem

        if not show_history_problem(self._chat, problem):
            self.unsaved_at_exit = PREFIX + problem.removeprefix(PREFIX)

    def notify(self, message: str, *, title: str = "", **options: Any) -> None:
        """Every notification (a screen's or a widget's too) shown inert: some quote server
        text or the history file (tui/app/untrusted.py)."""
        super().notify(shown(message), title=shown_line(title), **options)

    # -- themes ------------------------------------------------------------------------------

    def _load_themes(self) -> list[str]:
        """Register the theme files and choose the remembered theme, before the app runs: set
        later (on mount) it restyles every widget once more before the first frame. A
        remembered theme that cannot be used gives way to the default, with a notice (in the
        returned errors), and is forgotten."""
        from tui.app.themes import DEFAULT_THEME, register_themes

        result = register_themes(self)
        wanted = self.preferences.theme
        problem = self._theme_problem(wanted) if wanted is not None else None
        if problem is not None:
            result.errors.append(
                f"theme {wanted!r} {problem}: using {DEFAULT_THEME} (f4 picks another)"
            )
            self.preferences.theme = None
            self.preferences.save()
        if wanted is None or problem is not None:
            wanted = DEFAULT_THEME
        if wanted in self.available_themes:
            self.theme = wanted
        return result.errors

    def _theme_problem(self, name: str) -> str | None:
        from tui.app.theme_colors import theme_problem

        theme = self.get_theme(name)
        if theme is None:
            return "is not available (its theme file is missing or broken)"
        return theme_problem(theme)

    def _remember_theme(self, _theme: object) -> None:
        # Once a frame has been drawn with it: a theme that cannot be drawn is never kept.
        self.call_after_refresh(self._keep_theme, self.theme)

    def _keep_theme(self, name: str) -> None:
        from tui.app.themes import DEFAULT_THEME

        if name != self.theme or self.preferences.theme == name:
            return  # another theme came since, or nothing changed
        problem = self._theme_problem(name)
        if problem is not None and name != DEFAULT_THEME:
            self.notify(f"theme {name!r} {problem}: using {DEFAULT_THEME}", severity="warning")
            self.theme = DEFAULT_THEME
            return
        self.preferences.theme = name
        self.preferences.save()

    # -- the app's own keys and the command palette: every binding, by its id ---------------

    def action_switch_theme(self) -> None:
        self.action_change_theme()

    def action_redraw(self) -> None:
        """Repaint every cell: the app paints only what changed, so text another program
        wrote into the terminal would otherwise stay until something covers it."""
        repaint_everything(self.screen)

    def action_help(self) -> None:
        from tui.app.screens.help import HelpScreen

        self.push_screen(HelpScreen(HELP_ENTRIES, title="firsttoken keys"))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        for command in PALETTE_COMMANDS:
            target = self if hasattr(self, f"action_{command.action}") else self._chat
            action = getattr(target, f"action_{command.action}")
            callback = partial(action, *command.args) if command.args else action
            yield SystemCommand(command.title, command.help, callback)
        yield from super().get_system_commands(screen)

    async def on_unmount(self) -> None:
        from tui.app.race.race_screen import RaceScreen

        if self.prompt_history is not None:
            self.prompt_history.save()  # a prompt sent just before quitting
        for screen in self.screen_stack:
            if isinstance(screen, RaceScreen):
                await screen.stop()  # its replies under way are kept, as the chat's are
        if self._chat.turn is not None:
            await self._chat.turn.stop()
        self.chat.history.close()  # a reply still arriving is saved as it stands (incomplete)
        self.races.close()  # what races opened, before the loop they run on stops
        await self.chat.engine.close()  # the client, its loop, the demo server if one started


def users_app(
    config: Config,
    open_endpoint: Callable[[], AbstractContextManager[Endpoint]],
    **options: Any,
) -> FirstTokenApp:
    """The app as a user runs it: the remembered preferences and prompt history, kept."""
    from tui.app.preferences import Preferences, PromptHistory

    return FirstTokenApp(
        config,
        open_endpoint,
        preferences=Preferences.load(),
        prompt_history=PromptHistory(),
        **options,
    )
