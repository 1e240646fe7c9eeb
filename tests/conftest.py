"""Every test runs isolated from the user's real config, keys and history."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tui.demo import DemoServer
from tui.demo.latency_model import latency_model

_LEAKY_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "FIRSTTOKEN_API_KEY",
    "FIRSTTOKEN_BASE_URL",
    "FIRSTTOKEN_MODEL",
    "FIRSTTOKEN_CONFIG",
    "FIRSTTOKEN_SETTINGS",
    "NO_COLOR",
    # Proxies from the developer's shell would route the tests' loopback requests.
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
)


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point FIRSTTOKEN_HOME at a fresh folder and drop env vars that would leak a real setup."""
    home = tmp_path_factory.mktemp("firsttoken-home")
    monkeypatch.setenv("FIRSTTOKEN_HOME", str(home))
    for name in _LEAKY_ENV:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
async def server() -> AsyncIterator[DemoServer]:
    """The demo endpoint with no simulated latency, on this test's own event loop."""
    demo = DemoServer(latency_model("instant"))
    await demo.start()
    yield demo
    await demo.stop()
