"""The current theme's colours as Rich styles take them.

A theme holds Textual colour syntax: Textual's own ANSI themes say "ansi_magenta" or
"ansi_default", which Rich cannot parse (it raises MissingStyle while rendering, long after the
theme was chosen). Every Rich style the app builds from a theme colour goes through here.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.color import Color, ColorParseError
from textual.theme import Theme

THEME_COLOURS = ("primary", "secondary", "accent", "success", "warning", "error")


def rich_colour(value: str | None, fallback: str) -> str:
    """`value` (Textual's colour syntax) as a colour Rich parses ("color(5)" for an ANSI
    colour, "default" for the terminal's own); `fallback` when it is missing or unreadable."""
    if not value:
        return fallback
    try:
        return Color.parse(value).rich_color.name
    except ColorParseError:
        return fallback


def theme_colour(app: App[Any], name: str, fallback: str) -> str:
    """The current theme's colour `name` (one of THEME_COLOURS) for a Rich style."""
    return rich_colour(getattr(app.current_theme, name, None), fallback)


def theme_problem(theme: Theme) -> str | None:
    """Why the app cannot draw with `theme`, in a few words (None: it can). Checked before a
    theme is used at start and before one is remembered, so no theme can end the app."""
    for name in THEME_COLOURS:
        value = getattr(theme, name, None)
        if value is None:
            continue
        try:
            Color.parse(value)
        except ColorParseError:
            return f"its {name} {value!r} is not a colour"
    try:
        theme.to_color_system().generate()
    except Exception as error:  # Textual's own checks raise whatever they meet
        return f"Textual rejected it ({type(error).__name__}: {error})"
    return None
