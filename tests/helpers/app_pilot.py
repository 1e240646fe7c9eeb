"""Shared helpers for the app tests: the app over a running endpoint, waiting, the figures."""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from textual._xterm_parser import XTermParser
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

import tui.app.app
import tui.app.chat.reply_turn
import tui.app.chat.reply_writer
from tui.app.app import FirstTokenApp
from tui.app.chat.chat_log import ChatLog
from tui.app.chat.message_view import AssistantMessage, MessageView
from tui.app.panel.live_figures import LiveFigures
from tui.app.preferences import Preferences, PromptHistory
from tui.app.render import RenderScreen
from tui.config import Config, ConfigFlags, load_config
from tui.engine.metrics.prefill import PrefillSample
from tui.engine.metrics.record import RequestRecord, Thresholds
from tui.wiring import Endpoint


class WidgetsInApp(App[None]):
    """Some of the app's widgets alone, with its stylesheet (borders, sizes) and main screen."""

    CSS_PATH = Path(tui.app.app.__file__).with_name("app.tcss")

    def __init__(self, *widgets: Widget) -> None:
        super().__init__()
        self._widgets = widgets

    def get_default_screen(self) -> RenderScreen:
        return RenderScreen()

    def compose(self) -> ComposeResult:
        yield from self._widgets


def make_app(
    base_url: str,
    *,
    store: Any = None,
    resume_chat: int | None = None,
    race: Any = None,
    llamacpp: bool = False,
    **overrides: Any,
) -> FirstTokenApp:
    """The app against `base_url` with an isolated config (no files, no env); `overrides`
    change the config, `race` opens a race at start as `--race` does; `llamacpp`: the
    endpoint is a llama.cpp server (its prompt progress asked for)."""
    config = load_config(ConfigFlags(base_url=base_url), env={})
    if overrides:
        config = dataclasses.replace(config, **overrides)
    endpoint = Endpoint(base_url=base_url, api_key="demo", simulated=True, llamacpp=llamacpp)
    return firsttoken_app(config, endpoint, store=store, resume_chat=resume_chat, race=race)


async def wait_for(
    pilot: Pilot[Any], predicate: Callable[[], bool], timeout: float = 15.0, what: str = ""
) -> None:
    """Poll (letting the app run) until predicate() holds; fail with `what` on timeout."""
    steps = int(timeout / 0.02)
    for _ in range(steps):
        if predicate():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what or predicate}")


async def wait_ready(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, FirstTokenApp)
    await wait_for(
        pilot,
        lambda: app.chat.engine.connected and app.chat_screen.preview is not None,
        what="warm-up",
    )


async def send(pilot: Pilot[Any], text: str) -> None:
    """Type `text` into the prompt and press Enter."""
    app = pilot.app
    assert isinstance(app, FirstTokenApp)
    app.query_one("#prompt").focus()
    await pilot.press(*text)
    await pilot.press("enter")


async def send_and_wait(pilot: Pilot[Any], text: str) -> RequestRecord:
    app = pilot.app
    assert isinstance(app, FirstTokenApp)
    before = app.chat_screen.last_record
    await send(pilot, text)
    try:
        await wait_for(
            pilot,
            lambda: (
                app.chat_screen.last_record is not None
                and app.chat_screen.last_record is not before
                and not app.chat_screen.busy
            ),
            what=f"the reply to {text!r}",
        )
    except AssertionError as error:
        raise AssertionError(f"{error}; app state: {describe(app)}") from None
    await pilot.pause(0.05)
    assert app.chat_screen.last_record is not None
    return app.chat_screen.last_record


async def send_sample_and_wait(pilot: Pilot[Any], what: str = "the sample's reply") -> None:
    """F6 loads the sample, which ends with a user message; Enter sends it as it stands."""
    app = pilot.app
    assert isinstance(app, FirstTokenApp)
    await pilot.press("f6")
    await wait_for(pilot, app.chat.state.awaiting_reply, what="the sample")
    before = app.chat_screen.last_record
    await pilot.press("enter")
    await wait_for(
        pilot,
        lambda: app.chat_screen.last_record is not before and not app.chat_screen.busy,
        what=what,
    )


async def pick_theme(pilot: Pilot[Any], name: str) -> None:
    """F4, the theme's name typed into the palette, Enter: as a user picks one."""
    app = pilot.app
    assert isinstance(app, FirstTokenApp)
    await pilot.press("f4")
    await wait_for(pilot, lambda: app.screen is not app.chat_screen, what="the theme palette")
    await pilot.press(*name)
    await pilot.pause(0.1)
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.theme == name, what=f"the theme {name}")
    await wait_for(pilot, lambda: app.screen is app.chat_screen, what="the palette closed")


def describe(app: FirstTokenApp) -> str:
    """What a timed-out wait needs to say: where the request got stuck."""
    turn = app.chat_screen.turn
    runner = turn.current if turn is not None else None
    writer = turn.writer if turn is not None else None
    prompt = getattr(app.query_one("#prompt"), "text", "")
    return (
        f"busy={app.chat_screen.busy} focused={app.focused!r} prompt={prompt!r} "
        f"messages={len(app.chat.state.messages)} state={runner.state if runner else None} "
        f"writer_writes={writer.writes if writer else None} "
        f"workers={[(w.group, w.state.name) for w in app.workers]}"
    )


FIXED_TIMINGS = {
    "ttfb_ms": 212.0,
    "ttft_ms": 240.0,
    "total_ms": 1830.0,
    "tpot_ms": 26.5,
    "itl_p50_ms": 25.0,
    "itl_p95_ms": 31.0,
    "output_tokens_per_s": 37.7,
}


FIXED_PHASES = {
    "request_sent": 0.4,
    "response_head": 196.0,
    "first_byte": 15.6,
    "first_token": 28.0,
}


def fixed_record(record: RequestRecord) -> RequestRecord:
    """Snapshot hook: wall-clock figures replaced by fixed ones (only where measured)."""
    changes: dict[str, object] = {
        k: v for k, v in FIXED_TIMINGS.items() if getattr(record, k) is not None
    }
    if record.error_message:  # the demo's random port appears in error hints
        changes["error_message"] = re.sub(
            r"127\.0\.0\.1:\d+", "demo.local:8000", record.error_message
        )
    if record.phases_ms is not None:  # TTFT's parts, adding up to the fixed TTFT
        changes["phases_ms"] = dict(FIXED_PHASES)
        changes["connection_reused"] = True
    if record.longest_gap_ms is not None:
        changes["longest_gap_ms"] = FIXED_TIMINGS["itl_p95_ms"]
    if record.time_to_first_answer_ms is not None:  # no reasoning: the first answer is TTFT
        changes["time_to_first_answer_ms"] = FIXED_TIMINGS["ttft_ms"]
    fixed = dataclasses.replace(record, started_at_epoch=0.0, **changes)
    fixed.ttft_level = Thresholds().for_target(fixed.ttft_target_ms).level(fixed.ttft_ms)
    return fixed


def fixed_live(live: LiveFigures) -> LiveFigures:
    """Snapshot hook for the live panel: fixed times, the real (deterministic) token count."""
    return dataclasses.replace(
        live,
        elapsed_ms=1234.0,
        ttfb_ms=212.0 if live.ttfb_ms is not None else None,
        ttft_ms=240.0 if live.ttft_ms is not None else None,
        decode_s=0.5,
        prefill=fixed_prefill(live.prefill),
        prefill_rate=833.3 if live.prefill is not None else None,
        prefill_eta_s=3.9 if live.prefill is not None else None,
    )


def fixed_prefill(sample: PrefillSample | None) -> PrefillSample | None:
    """A prompt 2,048 tokens into its prefill (of the real total), at the server's 2.46 s."""
    if sample is None:
        return None
    return dataclasses.replace(sample, processed=min(2048, sample.total), server_ms=2457.6)


def replies(app: FirstTokenApp) -> list[AssistantMessage]:
    """The reply blocks on screen (not the hidden spare the next Enter will use)."""
    return app.query_one(ChatLog).replies()


def shown_views(app: FirstTokenApp) -> list[MessageView]:
    return app.query_one(ChatLog).shown_views()


class FrozenClock:
    """`time.perf_counter` of the reply's writer and of the panel's live figures, frozen at
    the moment it is installed and moved only by `advance`: whether writes are "flowing",
    and the figures shown, then follow the test's steps, not the machine's load."""

    def __init__(self, monkeypatch: Any) -> None:
        self.now = time.perf_counter()
        clock = SimpleNamespace(perf_counter=lambda: self.now)
        monkeypatch.setattr(tui.app.chat.reply_writer, "time", clock)
        monkeypatch.setattr(tui.app.chat.reply_turn, "time", clock)

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def set(self, now: float) -> None:
        self.now = now


def record_layouts(monkeypatch: Any, note: Callable[[], Any] = lambda: True) -> list[Any]:
    """What `note()` says at each screen layout from now on (one entry per layout)."""
    layouts: list[Any] = []
    refresh_layout = Screen._refresh_layout

    def noted(screen: Screen, *args: Any, **kwargs: Any) -> None:
        layouts.append(note())
        refresh_layout(screen, *args, **kwargs)

    monkeypatch.setattr(Screen, "_refresh_layout", noted)
    return layouts


def firsttoken_app(
    config: Config, endpoint: Endpoint, *, remember: bool = False, **options: Any
) -> FirstTokenApp:
    """The app on `endpoint`; with `remember` it reads and writes the preferences and the
    prompt history as a user's run does (in the test's own FIRSTTOKEN_HOME), else it keeps
    them in memory."""
    return FirstTokenApp(
        config,
        lambda: nullcontext(endpoint),
        preferences=Preferences.load() if remember else Preferences.in_memory(),
        prompt_history=PromptHistory() if remember else None,
        **options,
    )


def demo_endpoint(demo: Any) -> Endpoint:
    """The endpoint of a demo server the test started (a DemoThread or DemoServer)."""
    return Endpoint(base_url=demo.base_url, api_key="demo", simulated=True)


UNSET = object()


class Host(App[None]):
    """Pushes one screen on mount and records what it was dismissed with."""

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self.screen_under_test = screen
        self.result: Any = UNSET
        self.results: list[Any] = []  # every answer, in order

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        self.push_screen(self.screen_under_test, callback=self._record)

    def _record(self, result: Any) -> None:
        self.result = result
        self.results.append(result)


def one_terminal_read(app: Any, data: str) -> None:
    """What the driver's input thread does with one read: parse it, hand every event over."""
    driver = app._driver
    for event in XTermParser().feed(data):
        driver.process_message(event)
