"""The app over an endpoint that is already running, as the tests build it."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from tui.app.app import FirstTokenApp
from tui.app.preferences import Preferences, PromptHistory
from tui.config import Config
from tui.wiring import Endpoint


def firsttoken_app(
    config: Config, endpoint: Endpoint, *, remember: bool = False, **options: Any
) -> FirstTokenApp:
    """The app on `endpoint`; with `remember` it reads and writes the preferences and the
    prompt history as a user's run does (in the test's own FIRSTTOKEN_HOME), else it keeps
    them in memory."""
    return FirstTokenApp(
        config,
        lambda: nullcontext(endpoint),
        preferences=Preferences.load() if remember else Preferences.in_memory(),
        prompt_history=PromptHistory() if remember else None,
        **options,
    )


def demo_endpoint(demo: Any) -> Endpoint:
    """The endpoint of a demo server the test started (a DemoThread or DemoServer)."""
    return Endpoint(base_url=demo.base_url, api_key="demo", simulated=True)
