"""Small remembered choices (theme, side panel, each endpoint's model) and the prompt history.

Both live in `locations.state_dir()`. They are conveniences, so a missing, unreadable or
corrupt file means "start fresh", never a crash, and every write replaces the file
atomically so a crash mid-write cannot leave half a file behind.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui import locations

PROMPT_HISTORY_LIMIT = 500


@dataclass
class Preferences:
    theme: str | None = None
    # Whether the side panel shows, chosen with F10, per width class (panel_fit.py). The old
    # `side_panel_collapsed` key is not carried over: which width it was chosen at is not known.
    side_panel: dict[str, bool] = field(default_factory=dict)
    # The model picked with F2, per endpoint (model_choice.endpoint_key): a model belongs to
    # the endpoint it was picked on. (A global `last_model` key in the file is not carried
    # over: which endpoint it belongs to is not known.)
    models: dict[str, str] = field(default_factory=dict)
    # False: kept in memory only, never written (`in_memory()`: a run that must leave no trace).
    kept: bool = field(default=True, repr=False, compare=False)

    def model_for(self, endpoint: str) -> str | None:
        return self.models.get(endpoint)

    def remember_model(self, endpoint: str, model: str) -> None:
        self.models[endpoint] = model

    def forget_model(self, endpoint: str) -> None:
        self.models.pop(endpoint, None)

    @staticmethod
    def default_path() -> Path:
        return locations.preferences_path()

    @classmethod
    def in_memory(cls) -> Preferences:
        """Defaults that `save()` never writes."""
        return cls(kept=False)

    @classmethod
    def load(cls, path: Path | None = None) -> Preferences:
        """The saved preferences; defaults for anything missing, corrupt or of the wrong type."""
        path = path or cls.default_path()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return cls()
        if not isinstance(data, dict):
            return cls()
        return cls(
            theme=_optional_str(data.get("theme")),
            side_panel=_bool_map(data.get("side_panel")),
            models=_str_map(data.get("models")),
        )

    def save(self, path: Path | None = None) -> None:
        """Best effort: a read-only state dir must not take the app down."""
        if not self.kept:
            return
        path = path or self.default_path()
        saved = {
            "theme": self.theme,
            "side_panel": self.side_panel,
            "models": self.models,
        }
        with contextlib.suppress(OSError):
            locations.write_atomically(path, json.dumps(saved, indent=2) + "\n")


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _str_map(value: Any) -> dict[str, str]:
    """The string-to-string entries of `value` (a corrupt entry costs only itself)."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and _optional_str(v)}


def _bool_map(value: Any) -> dict[str, bool]:
    """The string-to-bool entries of `value`."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, bool)}


class PromptHistory:
    """Sent prompts, oldest first (the prompt recalls them shell-style, see PromptInput).

    Stored as JSON lines ({"prompt": ...}) so multi-line prompts survive. Consecutive
    duplicates are stored once; only the newest `limit` prompts are kept.
    """

    def __init__(self, path: Path | None = None, limit: int = PROMPT_HISTORY_LIMIT) -> None:
        self.path = path or locations.prompt_history_path()
        self.limit = limit
        self.entries: list[str] = self._read()
        self._unsaved = False

    def _read(self) -> list[str]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return []
        entries: list[str] = []
        for line in lines:
            try:
                prompt = json.loads(line).get("prompt")
            except (ValueError, AttributeError):
                continue  # a corrupt line costs that one prompt, not the whole history
            if isinstance(prompt, str) and prompt.strip():
                entries.append(prompt)
        return entries[-self.limit :]

    def append(self, prompt: str, *, save: bool = True) -> None:
        """Remember a sent prompt. With `save=False` the file is written by a later `save()`
        (the app defers it past Enter's frame: the atomic rewrite is file-system work the
        first words should not wait for)."""
        if not prompt.strip() or (self.entries and self.entries[-1] == prompt):
            return
        self.entries.append(prompt)
        del self.entries[: -self.limit]
        self._unsaved = True
        if save:
            self.save()

    def save(self) -> None:
        """Write the history if it changed since the last write."""
        if not self._unsaved:
            return
        self._unsaved = False
        text = "".join(json.dumps({"prompt": entry}) + "\n" for entry in self.entries)
        # History is a convenience: if the disk refuses, keep it in memory for this run.
        with contextlib.suppress(OSError):
            locations.write_atomically(self.path, text)
