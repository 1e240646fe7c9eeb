"""Theme files: the packaged three load and are valid; broken user files become named errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.color import Color

from tui import locations
from tui.app.themes import DEFAULT_THEME, load_themes, parse_theme, register_themes

PACKAGED = {"firsttoken-dark", "firsttoken-light", "firsttoken-high-contrast"}


@pytest.fixture
def themes_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FIRSTTOKEN_HOME", str(tmp_path))
    folder = locations.user_themes_dir()
    folder.mkdir(parents=True)
    return folder


def test_packaged_themes_load_without_errors(themes_dir: Path) -> None:
    result = load_themes()
    assert result.errors == []
    assert set(result.names()) == PACKAGED
    assert DEFAULT_THEME in result.names()


def test_packaged_themes_define_every_colour_and_distinct_ttft_colours(themes_dir: Path) -> None:
    for theme in load_themes().themes:
        for key in (
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
        ):
            assert getattr(theme, key), f"{theme.name} lacks {key}"
        ttft = {Color.parse(c).hex for c in (theme.success, theme.warning, theme.error)}
        assert len(ttft) == 3, theme.name
        assert theme.variables
    light = next(t for t in load_themes().themes if t.name == "firsttoken-light")
    assert light.dark is False


def test_high_contrast_text_colours_reach_seven_to_one(themes_dir: Path) -> None:
    def luminance(color: Color) -> float:
        def channel(value: int) -> float:
            c = value / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)

    theme = next(t for t in load_themes().themes if t.name == "firsttoken-high-contrast")
    background = luminance(Color.parse(theme.background))
    for key in ("foreground", "primary", "success", "warning", "error"):
        ratio = (luminance(Color.parse(getattr(theme, key))) + 0.05) / (background + 0.05)
        assert ratio >= 7, f"{key}: {ratio:.1f}:1"


def test_broken_user_theme_gives_named_error_and_others_still_load(themes_dir: Path) -> None:
    (themes_dir / "mine.toml").write_text(
        'name = "mine"\nprimary = "#123456"\nbackground = "blurple"\n'
    )
    (themes_dir / "syntax.toml").write_text('name = "syntax"\nprimary = \n')
    (themes_dir / "extra.toml").write_text('name = "extra"\nprimary = "#123456"\nsparkle = 1\n')
    (themes_dir / "good.toml").write_text('name = "good"\nprimary = "#336699"\ndark = false\n')
    result = load_themes()
    assert "good" in result.names()
    assert set(result.names()) >= PACKAGED
    assert len(result.errors) == 3
    joined = "\n".join(result.errors)
    assert "mine.toml: background 'blurple' is not a colour" in joined
    assert "syntax.toml: TOML syntax error" in joined
    assert "extra.toml: unknown key 'sparkle'" in joined


def test_user_theme_overrides_packaged_theme_by_name(themes_dir: Path) -> None:
    (themes_dir / "my-dark.toml").write_text('name = "firsttoken-dark"\nprimary = "#FF00FF"\n')
    result = load_themes()
    assert result.errors == []
    dark = [t for t in result.themes if t.name == "firsttoken-dark"]
    assert len(dark) == 1
    assert dark[0].primary == "#FF00FF"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('primary = "#fff"\ndark = "yes"', "dark must be true or false"),
        ('background = "#000"', "primary colour is missing"),
        (
            'primary = "#fff"\n[variables]\nborder = "nope"',
            "variables.border 'nope' is not a colour",
        ),
        ('primary = "#fff"\ntext_alpha = 3', "text_alpha must be between 0 and 1"),
        ("primary = 12", "primary must be a colour string"),
    ],
)
def test_parse_theme_reports_the_problem(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_theme(text, "x")


def test_variables_accept_opacity_keywords_and_styles() -> None:
    theme = parse_theme(
        'primary = "#fff"\n[variables]\n"input-selection-background" = "#81a1c1 35%"\n'
        '"footer-key-background" = "transparent"\n"block-cursor-text-style" = "bold"\n',
        "fallback-name",
    )
    assert theme.name == "fallback-name"


async def test_themes_register_and_apply(themes_dir: Path) -> None:
    app = App()
    async with app.run_test():
        result = register_themes(app)
        assert result.errors == []
        for theme in result.themes:
            app.theme = theme.name
            assert app.current_theme.name == theme.name
        assert "textual-dark" in app.available_themes
