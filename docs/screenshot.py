"""Redraw docs/firsttoken.svg: the app on the embedded demo endpoint, after one reply.

Run from the repository root: `python docs/screenshot.py [OUT.svg]`. It uses a throwaway
FIRSTTOKEN_HOME, so no config, history or preferences of yours are read or written.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

QUESTION = "What does trimming the prompt do to time to first token?"


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


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/firsttoken.svg").resolve()
    with tempfile.TemporaryDirectory() as home:
        os.environ["FIRSTTOKEN_HOME"] = home
        for name in ("FIRSTTOKEN_API_KEY", "OPENAI_API_KEY", "FIRSTTOKEN_BASE_URL"):
            os.environ.pop(name, None)
        asyncio.run(shoot(out))
    print(out)


if __name__ == "__main__":
    main()
