"""Finding, parsing and reading the two config files against the schema.

Each file becomes a list of `Setting`s (field, value, origin); the loader layers them. Problems
become a one-line ConfigError (syntax, type, range) or a warning (unknown keys).
"""

from __future__ import annotations

import errno
import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from tui import locations
from tui.config_schema import (
    JSON_KEYS,
    REQUEST_CLASS_KEYS,
    TOML_KEYS,
    TOML_NAMED_TABLES,
    ConfigError,
    Invalid,
    Key,
    demo_presets,
    show,
    show_url,
    url,
)
from tui.engine.metrics.record import DEFAULT_REQUEST_CLASSES, RequestClass


def _toml() -> Any:
    """The TOML parser, imported when a config.toml is read (most runs read none)."""
    if sys.version_info >= (3, 11):
        import tomllib as parser
    else:  # pragma: no cover - exercised only on Python 3.10
        import tomli as parser
    return parser


CONFIG_NAME = "config.toml"
SETTINGS_NAME = "settings.json"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TOML_POSITION = re.compile(r"^(?P<msg>.*?)\s*\(at line (?P<line>\d+), column (?P<col>\d+)\)$")


@dataclass(frozen=True)
class Setting:
    field: str
    value: Any
    origin: str  # "config.toml:llm.model"
    into: str | None = None


@dataclass(frozen=True)
class Source:
    """A found file: where it is, how to name it in messages, and its role (for origins)."""

    path: Path
    shown: str
    role: str  # CONFIG_NAME or SETTINGS_NAME


def discover(
    role: str,
    flag_path: Path | None,
    flag_name: str,
    env: Mapping[str, str],
    env_name: str,
    cwd: Path,
    searched: list[str],
    warnings: list[str] | None = None,
) -> Source | None:
    """The first of: the flag, $ENV_NAME, ./role, the user config dir. Explicit paths (flag or
    env) must exist; the others are optional (a link there to nothing is a warning). Every path
    looked at is appended to `searched`."""
    explicit = [(flag_path, flag_name)] if flag_path else []
    if not explicit and env.get(env_name):
        explicit = [(Path(env[env_name]), f"${env_name}")]
    for given, how in explicit:
        path = _absolute(Path(given).expanduser(), cwd)
        searched.append(str(path))
        if not path.is_file():
            problem = _not_a_file(path)
            raise ConfigError(f"{how} {given}: {problem}; pass an existing {role} or drop {how}")
        return Source(path, _shown(path, cwd), role)
    for folder in (cwd, locations.config_dir()):
        path = _absolute(folder / role, cwd)
        if str(path) in searched:
            continue
        searched.append(str(path))
        if path.is_file():
            return Source(path, _shown(path, cwd), role)
        if path.is_symlink() and warnings is not None:  # a link to nothing: say so, go on
            warnings.append(f"{path} {_not_a_file(path)}: skipped; fix the link or remove it")
    return None


def _not_a_file(path: Path) -> str:
    """Why `path` is not a file to read, in words that say what it is."""
    if path.is_dir():
        return "is a directory"
    if path.is_symlink():
        try:
            path.stat()
        except OSError as error:
            if error.errno == errno.ELOOP:
                return "is a symlink loop (the link leads back to itself)"
        try:
            target = os.readlink(path)
        except OSError:
            return "is a link to nothing"
        return f"is a link to {target}, which does not exist"
    return "no such file"


def _absolute(path: Path, cwd: Path) -> Path:
    return path if path.is_absolute() else cwd / path


def _shown(path: Path, cwd: Path) -> str:
    """Relative to the current dir when inside it (short), else the full path (findable)."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _read_text(source: Source) -> str:
    try:
        return source.path.read_text(encoding="utf-8-sig")  # tolerate a BOM from Windows editors
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{source.shown}: not UTF-8 text ({error.reason}); save it as UTF-8"
        ) from None
    except OSError as error:
        raise ConfigError(f"{source.shown}: cannot read: {error.strerror or error}") from None


def parse(source: Source) -> dict[str, Any]:
    """The file's top-level table; a syntax error becomes "path:line:col: message"."""
    content = _read_text(source)
    if source.role == CONFIG_NAME:
        toml = _toml()
        try:
            return toml.loads(content)
        except toml.TOMLDecodeError as error:
            line, col, message = _toml_position(error, content)
            raise ConfigError(f"{source.shown}:{line}:{col}: {message}") from None
    try:
        data = json.loads(content)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{source.shown}:{error.lineno}:{error.colno}: {error.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source.shown}: expected a JSON object {{...}} at the top level")
    return data


def _toml_position(error: Exception, content: str) -> tuple[int, int, str]:
    text = str(error)
    match = _TOML_POSITION.match(text)
    if match:
        return int(match["line"]), int(match["col"]), match["msg"]
    # "... (at end of document)": point just past the last character.
    message = text.replace("(at end of document)", "").strip()
    lines = content.split("\n")
    return len(lines), len(lines[-1]) + 1, message + " at the end of the file"


def read_settings(source: Source, env: Mapping[str, str], warnings: list[str]) -> list[Setting]:
    """Check every key of the file against the schema for its role."""
    try:
        return _read_settings(source, env, warnings)
    except RecursionError:  # tomllib, json and the walk below all recurse per level
        raise ConfigError(
            f"{source.shown}: nested too deeply to be a {source.role} (thousands of levels); "
            "is it the right file?"
        ) from None


def _read_settings(source: Source, env: Mapping[str, str], warnings: list[str]) -> list[Setting]:
    data = parse(source)
    keys = TOML_KEYS if source.role == CONFIG_NAME else JSON_KEYS
    named = TOML_NAMED_TABLES if source.role == CONFIG_NAME else {}
    reader = _Reader(source, env, warnings, {key.path: key for key in keys}, named)
    reader.walk(data, ())
    return reader.settings


class _Reader:
    def __init__(
        self,
        source: Source,
        env: Mapping[str, str],
        warnings: list[str],
        keys: dict[tuple[str, ...], Key],
        named: Mapping[tuple[str, ...], str],
    ) -> None:
        self.source = source
        self.env = env
        self.warnings = warnings
        self.keys = keys
        self.named = named
        self.settings: list[Setting] = []
        self.tables = {path[:i] for path in [*keys, *named] for i in range(1, len(path))}
        self.is_json = source.role == SETTINGS_NAME

    def origin(self, path: tuple[str, ...]) -> str:
        return f"{self.source.role}:{'.'.join(path)}"

    def fail(
        self,
        path: tuple[str, ...],
        value: Any,
        expected: str,
        hide: bool = False,
        as_url: bool = False,
    ) -> NoReturn:
        shown = "" if hide else f" = {show_url(value) if as_url else show(value)}"
        raise ConfigError(f"{self.source.shown}: {'.'.join(path)}{shown}: expected {expected}")

    def walk(self, table: Mapping[str, Any], at: tuple[str, ...]) -> None:
        for name, value in table.items():
            if self.is_json and name.startswith("//"):
                continue  # JSON has no comments; "//" keys document settings.example.json
            path = (*at, name)
            if path in self.keys:
                self.leaf(self.keys[path], value)
            elif path in self.named:
                self.request_classes(path, value)
            elif path in self.tables:
                if not isinstance(value, dict):
                    self.fail(path, value, "an object {...}" if self.is_json else "a table")
                self.walk(value, path)
            else:
                self.unknown(path)

    def warn_if_readable_by_others(self) -> None:
        """A literal key in a file that group or others can read: say so, with the fix."""
        try:
            mode = self.source.path.stat().st_mode
        except OSError:
            return
        if mode & 0o077:
            self.warnings.append(
                f"{self.source.shown} holds an API key and others can read it "
                f"(mode {mode & 0o777:03o}): run chmod 600 {self.source.path}"
            )

    def unknown(self, path: tuple[str, ...]) -> None:
        siblings = [p[-1] for p in [*self.keys, *self.named, *self.tables] if p[:-1] == path[:-1]]
        dotted = ".".join(path)
        message = f"{self.source.shown}: unknown key {dotted}"
        lowered = {name.lower(): name for name in siblings}
        import difflib  # only for a typo

        close = difflib.get_close_matches(path[-1].lower(), list(lowered), n=1, cutoff=0.6)
        if close:
            message += f"; did you mean {'.'.join((*path[:-1], lowered[close[0]]))}?"
        else:
            message += " (ignored)"
        self.warnings.append(message)

    def leaf(self, key: Key, raw: Any) -> None:
        value = self.expand(key.path, raw, key.secret)
        try:
            checked = key.check(value)
        except Invalid as invalid:
            self.fail(
                key.path,
                raw,
                invalid.expected,
                hide=key.secret or not key.echoed,
                as_url=key.check is url,
            )
        if key.field == "demo_preset" and checked not in (presets := demo_presets()):
            self.fail(key.path, raw, "one of " + ", ".join(presets))
        if key.secret and checked is None and raw not in (None, ""):
            # "${FIRSTTOKEN_API_KEY}" with the variable unset: no key, which is not an error.
            return
        if key.secret and checked is not None and "${" not in str(raw) and checked.isascii():
            # (A non-ASCII "key" is a placeholder such as "sk-你的…", warned about on its own.)
            self.warn_if_readable_by_others()
        self.settings.append(Setting(key.field, checked, self.origin(key.path), key.into))

    def expand(self, path: tuple[str, ...], value: Any, missing_means_none: bool) -> Any:
        """Replace ${VAR} in strings (also inside lists and tables) from the environment."""
        if isinstance(value, list):
            return [self.expand(path, item, missing_means_none) for item in value]
        if isinstance(value, dict):
            return {
                name: self.expand((*path, name), item, missing_means_none)
                for name, item in value.items()
            }
        if not isinstance(value, str) or "${" not in value:
            return value
        missing = [name for name in _VAR.findall(value) if name not in self.env]
        if missing and missing_means_none:
            return None
        if missing:
            raise ConfigError(
                f"{self.source.shown}: {'.'.join(path)} refers to ${{{missing[0]}}}, "
                f"but the environment variable {missing[0]} is not set; set it or edit the file"
            )
        return _VAR.sub(lambda match: self.env[match[1]], value)

    def request_classes(self, path: tuple[str, ...], value: Any) -> None:
        """[llm.request_classes] name = {ttft_target_ms = N, max_output_tokens = N}, in order.
        The table replaces the defaults; a default class named again keeps its unset fields."""
        if not isinstance(value, dict):
            self.fail(path, value, "a table of classes, e.g. short_qa = {ttft_target_ms = 500}")
        defaults = {request_class.name: request_class for request_class in DEFAULT_REQUEST_CLASSES}
        classes: list[RequestClass] = []
        for name, fields in value.items():
            where = (*path, name)
            if not isinstance(fields, dict):
                self.fail(where, fields, "a table such as {ttft_target_ms = 500}")
            base = defaults.get(name)
            parsed: dict[str, Any] = {
                "ttft_target_ms": base.ttft_target_ms if base else None,
                "max_output_tokens": base.max_output_tokens if base else None,
            }
            for field_name, raw in fields.items():
                check = REQUEST_CLASS_KEYS.get(field_name)
                if check is None:
                    self.unknown_in(where, field_name, REQUEST_CLASS_KEYS)
                    continue
                try:
                    parsed[field_name] = check(self.expand((*where, field_name), raw, False))
                except Invalid as invalid:
                    self.fail((*where, field_name), raw, invalid.expected)
            if parsed["ttft_target_ms"] is None:
                raise ConfigError(
                    f"{self.source.shown}: {'.'.join(where)}: missing ttft_target_ms "
                    "(a number > 0, the class's TTFT target), e.g. {ttft_target_ms = 500}"
                )
            classes.append(
                RequestClass(name, parsed["ttft_target_ms"], parsed["max_output_tokens"])
            )
        if not classes:
            self.fail(path, value, "at least one class, e.g. short_qa = {ttft_target_ms = 500}")
        self.settings.append(Setting("request_classes", tuple(classes), self.origin(path)))

    def unknown_in(self, at: tuple[str, ...], name: str, known: Mapping[str, Any]) -> None:
        message = f"{self.source.shown}: unknown key {'.'.join((*at, name))}"
        import difflib  # only for a typo

        close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
        suffix = f"; did you mean {'.'.join((*at, close[0]))}?" if close else " (ignored)"
        self.warnings.append(message + suffix)
