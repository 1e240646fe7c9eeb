"""Theme files: the packaged ones in `themes/` plus any the user drops into the config dir.

A theme file is TOML holding the fields of `textual.theme.Theme`. Loading never raises: a
broken file becomes one error line naming the file and the problem, so the app can show a
notification and carry on with the themes that did load.
"""

from __future__ import annotations

import importlib.resources
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.color import Color, ColorParseError
from textual.theme import Theme

from tui import locations

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DEFAULT_THEME = "firsttoken-dark"

COLOR_FIELDS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "success",
    "warning",
    "error",
    "boost",
)
NUMBER_FIELDS = ("luminosity_spread", "text_alpha")
KNOWN_KEYS = frozenset({"name", "dark", "variables", *COLOR_FIELDS, *NUMBER_FIELDS})

# Variable values Textual accepts that are not colours ("auto 87%" is a contrast colour).
_NON_COLOR_WORDS = frozenset({"transparent", "initial", "auto"})


@dataclass
class ThemeLoadResult:
    themes: list[Theme] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def names(self) -> list[str]:
        return [theme.name for theme in self.themes]


class ThemeFileError(ValueError):
    """One problem with one theme file; the message does not repeat the file name."""


def _packaged_theme_files() -> list[Traversable]:
    """The theme files shipped with firsttoken.

    Installed, `themes/` is the package `tui.themes`. Run from a source checkout without
    installing, that package does not exist, so fall back to the folder beside `tui/`.
    """
    try:
        root: Traversable = importlib.resources.files("tui.themes")
    except ModuleNotFoundError:
        root = Path(__file__).resolve().parents[2] / "themes"
        if not root.is_dir():
            return []
    files = [item for item in root.iterdir() if item.name.endswith(".toml") and item.is_file()]
    return sorted(files, key=lambda item: item.name)


def _user_theme_files() -> list[Path]:
    folder = locations.user_themes_dir()
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.glob("*.toml") if path.is_file())


def _display_name(path: Path) -> str:
    """A path short enough for a notification: ~ for the home folder."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def _check_color(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ThemeFileError(f'{key} must be a colour string like "#1e293b", got {value!r}')
    try:
        Color.parse(value)
    except ColorParseError:
        raise ThemeFileError(f"{key} {value!r} is not a colour") from None
    return value


def _check_variable(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ThemeFileError(f"variables.{key} must be a string, got {value!r}")
    if key.endswith("-style"):
        return value  # a text style such as "bold" or "none", not a colour
    # Textual allows a trailing opacity ("#81a1c1 35%") and a few keywords.
    words = value.split()
    if words and words[-1].endswith("%"):
        words = words[:-1]
    if len(words) == 1 and words[0] in _NON_COLOR_WORDS:
        return value
    _check_color(f"variables.{key}", " ".join(words))
    return value


def parse_theme(text: str, default_name: str) -> Theme:
    """Build a Theme from TOML text; raises ThemeFileError describing the first problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ThemeFileError(f"TOML syntax error: {error}") from None
    unknown = sorted(set(data) - KNOWN_KEYS)
    if unknown:
        known = ", ".join(sorted(KNOWN_KEYS))
        raise ThemeFileError(f"unknown key {unknown[0]!r} (known keys: {known})")
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError(f"name must be a non-empty string, got {name!r}")
    if "primary" not in data:
        raise ThemeFileError("primary colour is missing")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeFileError(f"dark must be true or false, got {dark!r}")
    kwargs: dict[str, Any] = {
        key: _check_color(key, data[key]) for key in COLOR_FIELDS if key in data
    }
    for key in NUMBER_FIELDS:
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ThemeFileError(f"{key} must be a number, got {value!r}")
            if not 0 <= value <= 1:
                raise ThemeFileError(f"{key} must be between 0 and 1, got {value!r}")
            kwargs[key] = float(value)
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ThemeFileError("variables must be a table ([variables])")
    checked = {str(key): _check_variable(str(key), value) for key, value in variables.items()}
    theme = Theme(name=name.strip(), dark=dark, variables=checked, **kwargs)
    try:
        # Build the colour system now so a theme that Textual would choke on fails here,
        # with the file name, rather than later when the user switches to it.
        theme.to_color_system().generate()
    except Exception as error:
        raise ThemeFileError(f"Textual rejected the theme: {error}") from None
    return theme


def _load_files(
    files: Iterable[tuple[str, Traversable | Path]], result: ThemeLoadResult
) -> dict[str, Theme]:
    themes: dict[str, Theme] = {}
    for label, file in files:
        default_name = file.name.removesuffix(".toml")
        try:
            text = file.read_text(encoding="utf-8")
            theme = parse_theme(text, default_name)
        except ThemeFileError as error:
            result.errors.append(f"{label}: {error}")
            continue
        except (OSError, UnicodeDecodeError) as error:
            result.errors.append(f"{label}: cannot read the file ({error})")
            continue
        themes[theme.name] = theme
    return themes


def load_themes() -> ThemeLoadResult:
    """Packaged themes, then user themes (a user file overrides a packaged one by name)."""
    result = ThemeLoadResult()
    packaged = _load_files(
        ((f"themes/{file.name} (packaged)", file) for file in _packaged_theme_files()), result
    )
    user = _load_files(((_display_name(path), path) for path in _user_theme_files()), result)
    merged = {**packaged, **user}
    result.themes = list(merged.values())
    return result


def register_themes(app: App[Any]) -> ThemeLoadResult:
    """Load the theme files and register each with `app`; Textual's own themes stay too.

    The caller shows `result.errors` (one notification per broken file).
    """
    result = load_themes()
    for theme in result.themes:
        app.register_theme(theme)
    return result
