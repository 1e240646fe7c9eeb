"""Footer bindings, help entries and palette commands describe the same actions."""

from __future__ import annotations

from tui.app.app import FirstTokenApp
from tui.app.keymap import APP_BINDINGS, CHAT_BINDINGS, HELP_ENTRIES, PALETTE_COMMANDS
from tui.app.screens.chat_screen import ChatScreen

DISPLAY = {"escape": "esc", "up": "↑", "down": "↓", "backslash": "\\"}


def _shown(key: str) -> str:
    return "+".join(DISPLAY.get(part, part) for part in key.split("+"))


def test_every_binding_and_palette_command_is_an_action_of_its_owner() -> None:
    for command in PALETTE_COMMANDS:
        name = f"action_{command.action}"
        assert callable(getattr(FirstTokenApp, name, None) or getattr(ChatScreen, name, None))
    for owner, bindings in ((FirstTokenApp, APP_BINDINGS), (ChatScreen, CHAT_BINDINGS)):
        for binding in bindings:
            name = binding.action.partition("(")[0]
            assert callable(getattr(owner, f"action_{name}", None)), (owner, binding)


def test_every_binding_is_in_the_palette_and_in_the_help() -> None:
    palette = {(c.action, c.args) for c in PALETTE_COMMANDS}
    help_keys = " / ".join(key for key, _what, _group in HELP_ENTRIES)
    for binding in (*CHAT_BINDINGS, *APP_BINDINGS):
        for key in binding.key.split(","):
            assert _shown(key) in help_keys, f"{key} missing from the help screen"
        if binding.action == "quit":
            continue  # Textual's own palette offers quit
        name, _, args = binding.action.partition("(")
        expected = (name, (int(args.rstrip(")")),) if args else ())
        assert expected in palette, f"{binding.action} missing from the palette"
