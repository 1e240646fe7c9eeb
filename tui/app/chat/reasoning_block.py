"""A reasoning model's thinking, above its answer: dimmed, streaming, then collapsed.

The thinking streams into the block while the model thinks; once the answer starts the block
collapses to one line (how long it thought, how many words), and the toggle key or a click
opens it again. A reopened chat shows each reply's thinking collapsed. The text is the
server's, so it is shown inert (no control sequence reaches the terminal) and never as markup.

The network side only appends the thinking's deltas to a list (RunState.reasoning); the block
reads that list a few times a second (`ReasoningFeed`), so a long thought costs one update per
poll, never one per token.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import ComposeResult, ScreenStackError
from textual.containers import Vertical
from textual.dom import NoScreen
from textual.timer import Timer
from textual.widgets import Static

from tui.app.keymap import TOGGLE_REASONING_KEY as TOGGLE_KEY
from tui.engine.text.inert import inert

if TYPE_CHECKING:
    from tui.session.run_state import RunState

POLL_S = 0.1  # how often a streaming thought is shown anew: 10 updates a second at most


def reasoning_text(message: dict[str, Any]) -> str:
    """The thinking a stored or loaded assistant message carries (`reasoning_content`, or
    OpenRouter's `reasoning`), "" when none."""
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def words(text: str) -> int:
    return len(text.split())


class ReasoningBlock(Vertical):
    """The thinking: a header line (what it is, the key) and the dimmed text below it."""

    DEFAULT_CSS = """
    ReasoningBlock {
        height: auto;
        margin: 0;
        padding: 0 0 0 1;
        border-left: outer $foreground 20%;
        color: $text-muted;
    }
    ReasoningBlock > .reasoning-header {
        height: 1;
        text-style: italic;
    }
    ReasoningBlock > .reasoning-text {
        height: auto;
        text-style: dim;
    }
    ReasoningBlock.-collapsed > .reasoning-text {
        display: none;
    }
    """

    def __init__(self, text: str = "", *, collapsed: bool = False) -> None:
        super().__init__(classes="-collapsed" if collapsed else "")
        self.text = text
        self.streaming = not text  # an empty block is one a reply is about to think into
        self.thought_s: float | None = None  # first thinking token -> first answer token
        self.header = Static("", markup=False, classes="reasoning-header")
        self.body = Static(inert(text), markup=False, classes="reasoning-text")
        self.show_header()

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.body

    def on_mount(self) -> None:
        self.screen.refresh_bindings()  # the footer shows the thinking's key now

    def on_unmount(self) -> None:
        with contextlib.suppress(ScreenStackError, NoScreen):
            self.screen.refresh_bindings()

    @property
    def collapsed(self) -> bool:
        return self.has_class("-collapsed")

    def set_text(self, text: str) -> None:
        """The whole thought so far (each update replaces the text: one render per poll)."""
        if text != self.text:
            self.text = text
            self.body.update(inert(text))
            self.show_header()

    def done(self, thought_s: float | None = None) -> None:
        """The answer started (or the reply ended): collapse to the header line."""
        self.streaming = False
        if thought_s is not None:
            self.thought_s = thought_s
        self.set_class(True, "-collapsed")
        self.show_header()

    def toggle(self) -> None:
        self.set_class(not self.collapsed, "-collapsed")
        self.show_header()

    def show_header(self) -> None:
        if self.streaming:
            self.header.update(f"▼ thinking… · {words(self.text):,} words")
            return
        took = f" for {self.thought_s:.1f} s" if self.thought_s is not None else ""
        action = "shows" if self.collapsed else "hides"
        arrow = "▶" if self.collapsed else "▼"
        self.header.update(
            f"{arrow} thought{took} · {words(self.text):,} words · {TOGGLE_KEY} {action} it"
        )

    def on_click(self, event: events.Click) -> None:
        event.stop()
        if not self.streaming:
            self.toggle()


class ReasoningFeed:
    """Shows a streaming reply's thinking: polls the runner's state, mounts the block (via
    `block()`, which creates it in the reply's widget) once the first thought arrives, and
    collapses it when the answer starts."""

    def __init__(self, state: RunState, block: Callable[[], ReasoningBlock | None]) -> None:
        self.state = state
        self.block = block  # the reply's block, created on the first call; None: not yet
        self.shown = 0  # how many of the state's parts are on screen
        self.timer: Timer | None = None
        self.shown_block: ReasoningBlock | None = None

    def start(self, set_interval: Callable[..., Timer]) -> None:
        self.timer = set_interval(POLL_S, self.poll, name="reasoning-feed")

    def poll(self) -> None:
        state = self.state
        # Read first: once the answer has started, every thought before it is in the list.
        answered = state.first_answer_at is not None
        parts = state.reasoning
        count = len(parts)  # the network thread only appends: the first `count` are final
        if count > self.shown:
            block = self.shown_block or self.block()
            if block is None:
                return  # the reply's widget is not mounted yet: the next poll shows it
            self.shown_block = block
            block.set_text("".join(parts[:count]))
            self.shown = count
        if answered:
            self.finish()  # the answer started: the thinking is over (or there was none)

    def finish(self, full_text: str | None = None) -> None:
        """The answer started, or the reply ended (`full_text`: the whole thought)."""
        if self.timer is not None:
            self.timer.stop()
            self.timer = None
        state = self.state
        if full_text and self.shown_block is None:
            self.shown_block = self.block()  # a reply that ended before the first poll
        block = self.shown_block
        if block is None:
            return
        if full_text:
            block.set_text(full_text)
        thought = None
        if state.first_token_at is not None and state.first_answer_at is not None:
            # Without streaming both came with the body: how long it thought is not known.
            thought = (state.first_answer_at - state.first_token_at) or None
        if block.streaming:
            block.done(thought)
