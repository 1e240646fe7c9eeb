"""Per-app adapters: how to start each app against the local endpoint with an isolated HOME,
how to tell it is ready, and how to send a prompt.

Every app gets a fresh HOME (and XDG dirs under it) per run, so nothing is shared between
runs or with the user's real setup, and every first message is a cold one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.render.peers.install_peers import executable, venv_dir
from benchmarks.render.screen_watch import Predicate, has_text

REPO = Path(__file__).resolve().parents[2]
PEERS = Path(__file__).resolve().parent / "peers"
MODEL = "demo"


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]


@dataclass(frozen=True)
class AppAdapter:
    name: str
    label: str  # column header, with the version measured
    prepare: Callable[[Path, str], Launch]  # (isolated home, base_url) -> how to start it
    ready: Predicate  # the screen shows the prompt input, ready for typing
    send_key: str = "\r"  # the key that sends the prompt
    per_key_s: float = 0.0  # typing pace; 0 = type the prompt in one write

    def available(self) -> str | None:
        """None when the app can run here, else why not."""
        return None


def _home_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }


# firsttoken --------------------------------------------------------------------------


def _firsttoken(home: Path, base_url: str) -> Launch:
    # Output limit above the long scenario's 4,000 tokens (the default reserve is 2,000),
    # and a budget large enough that trimming never touches the one-message prompt.
    config = home / "config.toml"
    config.write_text(
        "[llm]\n"
        f'base_url = "{base_url}"\n'
        f'model = "{MODEL}"\n'
        "[llm.prompt]\ntoken_budget = 32000\nreserve_for_output = 8192\n"
    )
    settings = home / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "streaming": {"maxTokens": 8192},
                "promptTrimmer": {"defaultBudget": 32000, "reserveForOutput": 8192},
            }
        )
    )
    env = _home_env(home) | {"FIRSTTOKEN_HOME": str(home / "firsttoken"), "FIRSTTOKEN_API_KEY": "x"}
    # A/B runs: RENDER_FIRSTTOKEN_SRC=/path/to/other/checkout measures that tree's `tui`.
    if os.environ.get("RENDER_FIRSTTOKEN_SRC"):
        env["PYTHONPATH"] = os.environ["RENDER_FIRSTTOKEN_SRC"]
    argv = [
        sys.executable, "-m", "tui",
        "--config", str(config), "--settings", str(settings),
        "--base-url", base_url, "--model", MODEL,
    ]  # fmt: skip
    # Profiling runs: RENDER_FIRSTTOKEN_PROFILE=out.prof runs the app under cProfile (see
    # profile_app.py); its figures are then the profiler's, not the app's.
    profile = os.environ.get("RENDER_FIRSTTOKEN_PROFILE")
    if profile:
        argv[1:3] = ["-m", "benchmarks.render.profile_app", profile]
        env["PYTHONPATH"] = env.get("PYTHONPATH", str(REPO))
    return Launch(argv, env)


def _firsttoken_ready(lines: list[str]) -> bool:
    # The footer's send binding and the prompt input are composed in the first frame.
    return has_text("send")(lines) and any("demo" in line for line in lines)


FIRSTTOKEN = AppAdapter(
    name="firsttoken",
    label="firsttoken",
    prepare=_firsttoken,
    ready=_firsttoken_ready,
)


# oterm 0.26.1 ------------------------------------------------------------------------
#
# oterm reads $OTERM_DATA_DIR (default ~/.local/share/oterm)/config.json; OpenAI-compatible
# endpoints live under "openaiCompatible": {name: {base_url, api_key}} and appear as the
# provider "openai-compat/<name>" (oterm/providers/__init__.py). A chat is created through a
# modal (provider and model pickers); the harness instead stores one chat in oterm's own
# SQLite store with oterm's own Store API, so the app opens straight into it, prompt
# focused. The splash screen is switched off (its animation is not part of the render path).

_OTERM_SEED = """
import asyncio
from oterm.store.store import Store
from oterm.types import ChatModel

async def main():
    store = await Store.get_store()
    await store.save_chat(ChatModel(name="bench", model="demo", provider="openai-compat/bench"))

asyncio.run(main())
"""


def _oterm(home: Path, base_url: str) -> Launch:
    env = _home_env(home)
    data = home / ".local" / "share" / "oterm"
    data.mkdir(parents=True, exist_ok=True)
    config = {
        "theme": "textual-dark",
        "splash-screen": False,
        "openaiCompatible": {"bench": {"base_url": base_url, "api_key": "x"}},
    }
    (data / "config.json").write_text(json.dumps(config))
    python = str(venv_dir("oterm") / "bin" / "python")
    subprocess.run(
        [python, "-c", _OTERM_SEED], env=os.environ | env, check=True, capture_output=True
    )
    return Launch([str(executable("oterm"))], env)


def _oterm_ready(lines: list[str]) -> bool:
    # The chat tab is open with its prompt marker; the footer lists "submit" once focused.
    return any("❯" in line for line in lines) and has_text("bench")(lines)


# elia 1.10.0 -------------------------------------------------------------------------
#
# elia reads $XDG_CONFIG_HOME/elia/config.toml; a [[models]] entry with api_base/api_key
# goes through litellm, where the "openai/" prefix selects the OpenAI-compatible route.
# Enter inserts a newline in elia's prompt; ctrl+j (a bare LF byte) sends.
# LITELLM_LOCAL_MODEL_COST_MAP stops litellm fetching its price list from GitHub on import:
# without internet that fetch would add a network timeout to elia's first send that a real
# user would not see.


def _elia(home: Path, base_url: str) -> Launch:
    env = _home_env(home) | {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    config_dir = home / ".config" / "elia"
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "config.toml").write_text(
        'default_model = "bench-demo"\n'
        'system_prompt = "You are a helpful assistant named Elia."\n'
        "[[models]]\n"
        'id = "bench-demo"\n'
        f'name = "openai/{MODEL}"\n'
        'display_name = "bench demo"\n'
        'provider = "bench"\n'
        f'api_base = "{base_url}"\n'
        'api_key = "x"\n'
    )
    return Launch([str(executable("elia"))], env)


def _elia_ready(lines: list[str]) -> bool:
    return has_text("Enter your message")(lines)


def _peer_available(app: str) -> Callable[[], str | None]:
    def check() -> str | None:
        if executable(app).exists():
            return None
        return f"{app} is not installed: run python -m benchmarks.render.peers.install_peers"

    return check


@dataclass(frozen=True)
class PeerAdapter(AppAdapter):
    def available(self) -> str | None:
        return _peer_available(self.name)()


OTERM = PeerAdapter(
    name="oterm", label="oterm 0.26.1", prepare=_oterm, ready=_oterm_ready, send_key="\r"
)
ELIA = PeerAdapter(
    name="elia", label="elia 1.10.0", prepare=_elia, ready=_elia_ready, send_key="\n"
)

# The floor: a bare Textual app on the same endpoint (bare_app.py) -------------------------


def _bare(interval_s: float, plain: bool = False) -> Callable[[Path, str], Launch]:
    def prepare(home: Path, base_url: str) -> Launch:
        argv = [sys.executable, "-m", "benchmarks.render.bare_app", "--base-url", base_url]
        argv += ["--interval", str(interval_s)] + (["--plain"] if plain else [])
        return Launch(argv, _home_env(home) | {"PYTHONPATH": str(REPO)})

    return prepare


def _bare_ready(lines: list[str]) -> bool:
    return has_text("bare textual")(lines)


TEXTUAL_BARE = AppAdapter(
    name="textual-bare",
    label="bare Textual, per-token stream",
    prepare=_bare(0.0),
    ready=_bare_ready,
)
TEXTUAL_COALESCED = AppAdapter(
    name="textual-coalesced",
    label="bare Textual, 50 ms coalescing",
    prepare=_bare(0.05),
    ready=_bare_ready,
)

# No Markdown at all: plain text in one Static, 50 ms coalescing. What any Textual app pays
# to show a stream on this machine, whatever it renders.
TEXTUAL_PLAIN = AppAdapter(
    name="textual-plain",
    label="bare Textual, plain text",
    prepare=_bare(0.05, plain=True),
    ready=_bare_ready,
)

ADAPTERS: dict[str, AppAdapter] = {
    a.name: a for a in (FIRSTTOKEN, OTERM, ELIA, TEXTUAL_BARE, TEXTUAL_COALESCED, TEXTUAL_PLAIN)
}
