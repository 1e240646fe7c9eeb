"""Every on-disk location firsttoken uses, in one place.

`FIRSTTOKEN_HOME` moves all of them under one folder (tests and benchmarks use it to stay
isolated from the user's real data); otherwise platformdirs decides per platform. What
firsttoken creates there is the owner's alone: files 0600, folders 0700 (`private_files`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs

APP_NAME = "firsttoken"


def _home_override() -> Path | None:
    home = os.environ.get("FIRSTTOKEN_HOME")
    return Path(home).expanduser() if home else None


def config_dir() -> Path:
    """Where config.toml, settings.json and extra themes live."""
    home = _home_override()
    return home / "config" if home else Path(platformdirs.user_config_dir(APP_NAME))


def data_dir() -> Path:
    """Where the SQLite history lives."""
    home = _home_override()
    return home / "data" if home else Path(platformdirs.user_data_dir(APP_NAME))


def cache_dir() -> Path:
    """Where tiktoken's vocabulary cache lives (TIKTOKEN_CACHE_DIR points here)."""
    home = _home_override()
    return home / "cache" if home else Path(platformdirs.user_cache_dir(APP_NAME))


def state_dir() -> Path:
    """Where small remembered choices live (the chosen theme, prompt history, the request
    adjustments models were found to need, what an endpoint's tokenizer is, the token
    estimate's calibration)."""
    home = _home_override()
    return home / "state" if home else Path(platformdirs.user_state_dir(APP_NAME))


def dialects_path() -> Path:
    """What each endpoint's models were learned to need in a request (engine/chat/dialects.py)."""
    return state_dir() / "dialects.json"


def history_db_path() -> Path:
    return data_dir() / "history.sqlite3"


def server_tokenizers_path() -> Path:
    """Which tokenizer API each endpoint + model answers, and its template's cost
    (engine/tokens/server_counts.py)."""
    return state_dir() / "server_tokenizers.json"


def calibration_path() -> Path:
    """Each model's calibration of the local token estimate (engine/tokens/calibration.py)."""
    return state_dir() / "calibration.json"


def user_themes_dir() -> Path:
    return config_dir() / "themes"


def preferences_path() -> Path:
    """The app's remembered choices: theme, side panel, each endpoint's model."""
    return state_dir() / "preferences.json"


def prompt_history_path() -> Path:
    """The prompts sent in the app, recalled with the up arrow."""
    return state_dir() / "prompt_history.jsonl"


PRIVATE_UMASK = 0o077


@contextmanager
def private_files() -> Iterator[None]:
    """Files and folders created inside are the owner's alone (umask 077): the history holds
    prompts and replies, the config may hold a key. The umask is process-wide; it only ever
    narrows here."""
    previous = os.umask(PRIVATE_UMASK)
    os.umask(previous | PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(previous)


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to a private temporary file beside `path`, then rename it over `path`: a
    concurrent reader sees the old file or the new one, never half of it. Raises OSError."""
    import tempfile

    with private_files():
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
        )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
