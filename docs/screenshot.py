"""Redraw docs/firsttoken.svg (the app on the embedded demo endpoint, after one reply) and
docs/race.svg (a race of two simulated models, after two rounds).

Run from the repository root: `python docs/screenshot.py`. It uses a throwaway
FIRSTTOKEN_HOME, so no config, history or preferences of yours are read or written.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

QUESTION = "What does trimming the prompt do to time to first token?"
RACE = ("demo-h100-70b", "demo-seed-qwen7b")
RACE_QUESTIONS = ("Which of you answers first? Reply 60 tokens.", "Once more, reply 60 tokens.")


async def shoot(out: Path) -> None:
    from tui.app.app import FirstTokenApp
    from tui.app.preferences import Preferences
    from tui.config import ConfigFlags, load_config
    from tui.wiring import open_endpoint

    config = load_config(ConfigFlags(), env={})
    app = FirstTokenApp(
        config,
        lambda: open_endpoint(config),
        preferences=Preferences.in_memory(),
        prompt_history=None,
    )
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(500):  # the demo endpoint and the warm-ups start in the background
            if app.chat.engine.connected and app.chat_screen.preview is not None:
                break
            await pilot.pause(0.02)
        app.query_one("#prompt").focus()
        await pilot.press(*QUESTION)
        await pilot.press("enter")
        for _ in range(1500):  # the reply streams at the demo's 60 tokens/s
            if app.chat_screen.last_record is not None and not app.chat_screen.busy:
                break
            await pilot.pause(0.02)
        await pilot.pause(0.5)  # the panel's next tick shows the finished record
        app.save_screenshot(filename=out.name, path=str(out.parent))


async def shoot_race(out: Path) -> None:
    from tui.app.app import FirstTokenApp
    from tui.app.preferences import Preferences
    from tui.app.race.race_screen import RaceScreen
    from tui.config import ConfigFlags, load_config
    from tui.race_targets import parse_targets
    from tui.wiring import open_endpoint

    config = load_config(ConfigFlags(), env={})
    app = FirstTokenApp(
        config,
        lambda: open_endpoint(config),
        preferences=Preferences.in_memory(),
        prompt_history=None,
        race=(parse_targets(list(RACE)), False, True),
    )
    async with app.run_test(size=(140, 40)) as pilot:
        for _ in range(1000):
            if isinstance(app.screen, RaceScreen) and app.screen.views:
                break
            await pilot.pause(0.02)
        screen = app.screen
        assert isinstance(screen, RaceScreen)
        for number, question in enumerate(RACE_QUESTIONS, 1):
            await pilot.press(*question)
            await pilot.press("enter")
            for _ in range(3000):
                if len(screen.scoreboard.rounds) == number:
                    break
                await pilot.pause(0.02)
        app.clear_notifications()
        await pilot.pause(0.5)
        app.save_screenshot(filename=out.name, path=str(out.parent))


def main() -> None:
    docs = Path("docs").resolve()
    with tempfile.TemporaryDirectory() as home:
        os.environ["FIRSTTOKEN_HOME"] = home
        for name in ("FIRSTTOKEN_API_KEY", "OPENAI_API_KEY", "FIRSTTOKEN_BASE_URL"):
            os.environ.pop(name, None)
        asyncio.run(shoot(docs / "firsttoken.svg"))
        asyncio.run(shoot_race(docs / "race.svg"))
    print(docs / "firsttoken.svg", docs / "race.svg")


if __name__ == "__main__":
    main()
