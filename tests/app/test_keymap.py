"""Footer bindings, help entries and palette commands describe the same actions."""

from __future__ import annotations

from tui.app.app import FirstTokenApp
from tui.app.keymap import APP_BINDINGS, HELP_ENTRIES, PALETTE_COMMANDS

DISPLAY = {"escape": "esc", "up": "↑", "down": "↓"}


def _shown(key: str) -> str:
    return "+".join(DISPLAY.get(part, part) for part in key.split("+"))


def test_every_palette_command_is_an_app_action() -> None:
    for command in PALETTE_COMMANDS:
        assert callable(getattr(FirstTokenApp, f"action_{command.action}", None)), command


def test_every_binding_is_in_the_palette_and_in_the_help() -> None:
    palette = {(c.action, c.args) for c in PALETTE_COMMANDS}
    help_keys = " / ".join(key for key, _what, _group in HELP_ENTRIES)
    for binding in APP_BINDINGS:
        for key in binding.key.split(","):
            assert _shown(key) in help_keys, f"{key} missing from the help screen"
        if binding.action == "quit":
            continue  # Textual's own palette offers quit
        name, _, args = binding.action.partition("(")
        expected = (name, (int(args.rstrip(")")),) if args else ())
        assert expected in palette, f"{binding.action} missing from the palette"
