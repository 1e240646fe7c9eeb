"""Every test runs isolated from the user's real config, keys and history."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import NoReturn

import pytest
from helpers import fault_results

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


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the run's own process: the workers inherit it
        folder = tempfile.mkdtemp(prefix="firsttoken-faults-")
        os.environ[fault_results.RESULTS_ENV] = folder
    config.addinivalue_line(
        "markers",
        "e2e: starts a process, a terminal, a real server or the whole app over an endpoint "
        "(the inner loop leaves them out: -m 'not e2e')",
    )


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` for the inner loop (`-m "not e2e"`): two workers a core, since its tests
    spend half their time waiting on an event loop; the full run keeps one a core, so the
    processes its e2e tests start have a core to run on."""
    if config.getoption("markexpr", "").replace(" ", "") == "note2e":
        return 2 * (os.cpu_count() or 1)
    return None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The fault matrix's document, compared once every worker has finished (its outcomes
    are in a shared folder: tests/helpers/fault_results.py)."""
    if hasattr(session.config, "workerinput"):
        return
    folder = Path(os.environ.get(fault_results.RESULTS_ENV, ""))
    if not folder.is_dir():
        return
    problem = fault_results.document_problem(folder)
    shutil.rmtree(folder, ignore_errors=True)
    if problem is not None:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"FAILED the fault matrix's document: {problem}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def processes_only_in_e2e(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test not marked e2e that starts a process or the whole app fails at once, saying so:
    the fast tier (`-m "not e2e"`) stays fast because the mark cannot be forgotten."""
    if request.node.get_closest_marker("e2e") is not None:
        return

    def refused(*_args: object, **_kwargs: object) -> NoReturn:
        raise AssertionError(
            "this test starts a process or the whole app: mark it e2e (pytest.mark.e2e)"
        )

    from tui.app.app import FirstTokenApp

    monkeypatch.setattr(FirstTokenApp, "__init__", refused)
    monkeypatch.setattr(subprocess.Popen, "__init__", refused)
    monkeypatch.setattr(pty, "fork", refused)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refused)


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
