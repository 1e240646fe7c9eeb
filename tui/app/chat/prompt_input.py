"""The multi-line prompt: Enter sends, ctrl+j (or shift+enter) inserts a newline,
Up/Down on the first/last line recall earlier prompts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

from tui.app.render import set_cursor_blink

NEWLINE_KEYS = ("ctrl+j", "shift+enter")


class PromptInput(TextArea):
    BINDINGS: ClassVar[list[BindingType]] = [
        # Shown in the footer; the key itself is handled in on_key so it is processed in
        # order after the characters typed before it (a priority binding would overtake them).
        Binding("enter", "submit", "send", show=True, id="send"),
        # ctrl+j arrives as a plain line feed in every terminal; shift+enter only where the
        # terminal reports it (kitty protocol, some others). Handled in on_key too, as Enter.
        Binding("ctrl+j,shift+enter", "newline", "newline", show=False, id="newline"),
        # The chat pages while the prompt keeps the focus (TextArea would move its cursor by
        # a page, which a prompt of a few lines has no use for).
        Binding("pageup", "screen.scroll_chat(-1)", "page up", show=False),
        Binding("pagedown", "screen.scroll_chat(1)", "page down", show=False),
    ]

    @dataclass
    class Submitted(Message):
        prompt_input: PromptInput
        text: str

    @dataclass
    class HeightChanged(Message):
        """The prompt grew or shrank (a line more or fewer): what sits above it follows."""

        height: int

    def __init__(self, history: list[str] | None = None, **kwargs: object) -> None:
        super().__init__(
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            compact=True,
            highlight_cursor_line=False,
            **kwargs,  # type: ignore[arg-type]
        )
        self.prompts: list[str] = list(history or [])
        # Called directly on Enter when set (the app sets it): a posted message would bubble
        # through every container's queue before the request could leave.
        self.on_submit: Callable[[str], None] | None = None
        self._recall_index: int | None = None  # position in history while recalling
        self._draft = ""  # what was typed before recalling started
        self._height = 0  # the outer height last said (HeightChanged)

    def action_submit(self) -> None:
        # An empty Enter is still passed on: after loading a conversation that ends with an
        # unanswered user message (the sample, --messages), it sends that conversation as is.
        text = self.text.strip()
        if text and (not self.prompts or self.prompts[-1] != text):
            self.prompts.append(text)
        self._recall_index = None
        if self.on_submit is not None:
            self.on_submit(text)
        else:
            self.post_message(self.Submitted(self, text))

    def on_key(self, event: events.Key) -> None:
        # Runs before TextArea's own key handler, which prevent_default() skips: Enter sends.
        # Enter and the newline keys are taken here, in the order the keys came: as bindings
        # they would act only once the key had bubbled up to the app, after the characters
        # typed behind them in the same terminal read had been inserted ("abc", ctrl+j,
        # "def" would give "abcdef" and a line break).
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.action_newline()
        elif event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()

    def on_resize(self, event: events.Resize) -> None:
        height = self.outer_size.height
        if height != self._height:
            self._height = height
            self.post_message(self.HeightChanged(height))

    def action_newline(self) -> None:
        self.insert("\n")

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == 0 and self._recall(-1):
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        last_row = self.document.line_count - 1
        if not select and self.cursor_location[0] == last_row and self._recall(+1):
            return
        super().action_cursor_down(select)

    def _recall(self, step: int) -> bool:
        if not self.prompts:
            return False
        if self._recall_index is None:
            if step > 0:
                return False
            self._draft = self.text
            index = len(self.prompts) - 1
        else:
            index = self._recall_index + step
        if index < 0:
            return True  # at the oldest prompt: stay, but swallow the key
        if index >= len(self.prompts):
            self._recall_index = None
            self._set(self._draft)
            return True
        self._recall_index = index
        self._set(self.prompts[index])
        return True

    def _set(self, text: str) -> None:
        self.text = text
        last = self.document.line_count - 1
        self.move_cursor((last, len(self.document.get_line(last))))

    def clear_prompt(self) -> None:
        self._recall_index = None
        self._draft = ""
        self.text = ""

    def set_blinking(self, blinking: bool) -> None:
        """Switch the cursor's blink (off while a reply streams: a blink is a frame)."""
        set_cursor_blink(self, blinking)
