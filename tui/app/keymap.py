"""Every key of the app in one place: the bindings (footer), the help screen's entries and
the command palette's commands, so the three cannot drift apart (a test checks they match).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding

# Keys chosen because terminals deliver them: no ctrl+s (flow control), no ctrl+m/i/h.
# The thinking's key: not bound by the prompt (TextArea), not by tmux or the terminals' own.
TOGGLE_REASONING_KEY = "ctrl+f"

# The chat screen's keys (its actions); they act while it is the screen on top.
CHAT_BINDINGS: tuple[Binding, ...] = (
    Binding("escape", "cancel", "cancel", id="cancel"),
    Binding("ctrl+t", "toggle_trimming", "trim", priority=True, id="toggle_trimming"),
    Binding("f3,ctrl+o", "toggle_streaming", "stream", priority=True, id="toggle_streaming"),
    Binding("f5,ctrl+r", "retry", "retry", priority=True, id="retry"),
    Binding("ctrl+n", "new_chat", "new", priority=True, id="new_chat"),
    Binding("ctrl+g", "open_chat", "chats", show=False, id="open_chat"),
    Binding("f2", "switch_model", "model", id="switch_model"),
    Binding(TOGGLE_REASONING_KEY, "toggle_reasoning", "thinking", id="toggle_reasoning"),
    Binding("f6", "load_sample", "sample", priority=True, id="load_sample"),
    Binding("f7", "copy_reply", "copy reply", show=False, priority=True, id="copy_reply"),
    Binding("f8", "copy_code", "copy code", show=False, id="copy_code"),
    Binding("f9", "system_prompt", "system prompt", show=False, id="system_prompt"),
    Binding("f10,ctrl+b", "toggle_panel", "panel", show=False, id="toggle_panel"),
    Binding("ctrl+up", "budget(1)", "budget +500", show=False, id="budget_up"),
    Binding("ctrl+down", "budget(-1)", "budget -500", show=False, id="budget_down"),
    Binding("f12", "race", "race", show=False, id="race"),
    Binding("f11,ctrl+backslash", "statistics", "stats", show=False, id="statistics"),
)
# A race's screen (tui/app/race/race_screen.py): the chat's race key goes back to the chat.
RACE_BINDINGS: tuple[Binding, ...] = (
    Binding("escape", "cancel", "cancel", id="race_cancel"),
    Binding("f12,ctrl+w", "leave", "back to the chat", id="race_leave"),
)
# The app's own keys (its actions), on every screen.
APP_BINDINGS: tuple[Binding, ...] = (
    Binding("f4", "switch_theme", "theme", show=False, id="switch_theme"),
    Binding("ctrl+l", "redraw", "redraw", show=False, priority=True, id="redraw"),
    Binding("f1", "help", "help", id="help"),
    Binding("ctrl+q", "quit", "quit", show=False, priority=True, id="quit"),
)


# (key, what it does, group): the help screen; the footer and palette show the same actions.
HELP_ENTRIES: list[tuple[str, str, str]] = [
    ("enter", "send the prompt", "Chat"),
    ("ctrl+j", "new line in the prompt (works in every terminal)", "Chat"),
    ("shift+enter", "new line, where the terminal reports it", "Chat"),
    ("↑ / ↓", "recall earlier prompts (on the first / last line)", "Chat"),
    ("pageup / pagedown", "scroll the chat a page (from the prompt too)", "Chat"),
    ("esc", "cancel the reply; what arrived stays, marked cancelled", "Chat"),
    ("f5 / ctrl+r", "retry the last request", "Chat"),
    ("ctrl+n", "new chat (keeps your system prompt, not the sample's)", "Chat"),
    ("ctrl+g", "open a saved chat and carry on where it stopped", "Chat"),
    ("f9", "set this chat's system prompt (f9 again saves it, esc cancels)", "Chat"),
    ("ctrl+f", "show / hide the last reply's thinking (a click on it too)", "Chat"),
    ("f7", "copy the last reply", "Chat"),
    ("f8", "copy the last code block of the last reply", "Chat"),
    ("mouse drag", "select text in replies (ctrl+c copies it)", "Chat"),
    ("ctrl+t", "trimming on / off for the next request", "Latency"),
    ("f3 / ctrl+o", "streaming on / off for the next request", "Latency"),
    ("ctrl+↑ / ctrl+↓", "prompt token budget +500 / -500", "Latency"),
    ("f6", "load the bloated sample conversation (trimming demo)", "Latency"),
    ("f12", "race this chat against another model or setting, side by side", "Latency"),
    ("f11 / ctrl+\\", "statistics: this model's TTFT percentiles beside the others'", "Latency"),
    ("f2", "switch model (from GET /v1/models)", "App"),
    ("f4", "switch theme (remembered)", "App"),
    ("f10 / ctrl+b", "show / hide the latency panel", "App"),
    ("ctrl+l", "redraw the whole screen (after another program wrote over it)", "App"),
    ("ctrl+p", "command palette: every command by name", "App"),
    ("f1", "this help", "App"),
    ("ctrl+q", "quit", "App"),
]


@dataclass(frozen=True)
class PaletteCommand:
    title: str
    help: str
    action: str  # the app's or the chat screen's action_<name>
    args: tuple[int, ...] = ()


PALETTE_COMMANDS: tuple[PaletteCommand, ...] = (
    PaletteCommand("Send", "send the prompt (enter)", "send"),
    PaletteCommand("Cancel generation", "stop the reply, keep what arrived (esc)", "cancel"),
    PaletteCommand(
        "Toggle trimming", "trim the next request to the budget (ctrl+t)", "toggle_trimming"
    ),
    PaletteCommand("Toggle streaming", "stream the next reply (f3 / ctrl+o)", "toggle_streaming"),
    PaletteCommand("Retry last request", "send the last prompt again (f5 / ctrl+r)", "retry"),
    PaletteCommand("New chat", "clear the conversation (ctrl+n)", "new_chat"),
    PaletteCommand("Open a saved chat", "carry on a chat from history (ctrl+g)", "open_chat"),
    PaletteCommand("Switch model", "pick a model from /v1/models (f2)", "switch_model"),
    PaletteCommand("Switch theme", "pick a theme (f4)", "switch_theme"),
    PaletteCommand(
        "Load bloated sample conversation", "demo trimming in one keystroke (f6)", "load_sample"
    ),
    PaletteCommand(
        "Show or hide thinking", "the last reply's reasoning (ctrl+f)", "toggle_reasoning"
    ),
    PaletteCommand(
        "Race this chat", "against another model, endpoint or setting, side by side (f12)", "race"
    ),
    PaletteCommand(
        "Statistics", "TTFT percentiles per model and endpoint (f11 / ctrl+\\)", "statistics"
    ),
    PaletteCommand(
        "Export chat as Markdown",
        "each reply with its figures, to a file here",
        "export_chat",
        (0,),
    ),
    PaletteCommand(
        "Export chat as JSON",
        "the messages as --messages reads them, to a file here",
        "export_chat",
        (1,),
    ),
    PaletteCommand("Copy last reply", "to the clipboard (f7)", "copy_reply"),
    PaletteCommand("Copy last code block", "of the last reply (f8)", "copy_code"),
    PaletteCommand("Set system prompt", "for this chat (f9)", "system_prompt"),
    PaletteCommand(
        "Toggle side panel", "show or hide the latency panel (f10 / ctrl+b)", "toggle_panel"
    ),
    PaletteCommand("Budget +500", "raise the prompt token budget (ctrl+up)", "budget", (1,)),
    PaletteCommand("Budget -500", "lower the prompt token budget (ctrl+down)", "budget", (-1,)),
    PaletteCommand("Redraw screen", "paint every cell again (ctrl+l)", "redraw"),
    PaletteCommand("Help", "every key (f1)", "help"),
)
