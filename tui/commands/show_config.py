"""`firsttoken config`: each effective value and where it came from; `config init`: write the
example files into the user config dir, never overwriting anything.

Secrets are masked: the key (`sk-…abcd`), and in base_url the userinfo password and any
secret-looking query value. Values from the files are shown inert."""

from __future__ import annotations

import argparse
import sys
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from tui import locations
from tui.commands._common import EXIT_OK, EXIT_USAGE, error, shown
from tui.config import (
    DEFAULT_BASE_URL,
    SETTING_FIELDS,
    Config,
    ConfigError,
    ConfigFlags,
    load_config,
    mask_secret,
)
from tui.config_examples import CONFIG_EXAMPLE_TOML, SETTINGS_EXAMPLE_JSON
from tui.config_provider import looks_secret, shown_proxies
from tui.engine.metrics.record import RequestClass
from tui.engine.text import redact
from tui.engine.text.inert import inert_line
from tui.engine.text.redact import mask_url


def run(args: argparse.Namespace, flags: ConfigFlags) -> int:
    if getattr(args, "config_action", None) == "init":
        return init(locations.config_dir(), sys.stdout, sys.stderr)
    try:
        config = load_config(flags)
    except ConfigError as problem:
        error(str(problem))
        return EXIT_USAGE
    sys.stdout.write(render(config))
    return EXIT_OK


def render(config: Config) -> str:
    """The report: aligned name / value / origin rows, the paths searched, the warnings."""
    rows = [
        (name, inert_line(_value(config, name)), inert_line(config.origin(name)))
        for name in SETTING_FIELDS
    ]
    name_width = max(len(name) for name, _, _ in rows)
    value_width = min(max(_width(value) for _, value, _ in rows), 48)
    lines = [
        "Effective configuration (flag > env > settings.json > config.toml > default):",
        "",
    ]
    for name, value, origin in rows:
        padding = " " * max(value_width - _width(value), 0)
        lines.append(f"  {name:<{name_width}}  {value}{padding}  {origin}")
    lines += ["", "Paths searched (first found is used):"]
    used = {str(path) for path in (config.config_path, config.settings_path) if path}
    for path in config.searched:
        mark = "found" if path in used else "-"
        lines.append(f"  {mark:<5}  {inert_line(path)}")
    if not config.searched:
        lines.append("  (none)")
    lines += ["", "Files the app keeps between runs:"]
    for what, kept in kept_files():
        lines.append(f"  {what:<15}  {inert_line(str(kept))}")
    if config.warnings:
        lines += ["", "Warnings:"]
        lines += [f"  {shown(warning)}" for warning in config.warnings]
    return "\n".join(lines) + "\n"


def kept_files() -> list[tuple[str, Path]]:
    """What the app remembers between runs, and where."""
    return [
        ("preferences", locations.preferences_path()),
        ("prompt history", locations.prompt_history_path()),
        ("chat history", locations.history_db_path()),
        ("your themes", locations.user_themes_dir()),
    ]


def _width(text: str) -> int:
    """Terminal columns: CJK characters (a key placeholder, a model name) take two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def _value(config: Config, name: str) -> str:
    value = getattr(config, name)
    if name == "api_key":
        if value is None and not config.uses_demo_endpoint:
            return "(none: no key is sent)"
        return mask_secret(value)
    if name == "base_url":
        if value is None:
            return "(embedded demo endpoint)" if config.uses_demo_endpoint else DEFAULT_BASE_URL
        return mask_url(value)
    if name in ("extra_headers", "extra_query"):
        return _table(value)
    if name == "proxies":
        return shown_proxies(value)
    if name == "api_key_header" and value is None:
        return "(none: Authorization: Bearer)"
    if name == "request_classes":
        return ", ".join(_request_class(request_class) for request_class in value)
    if isinstance(value, Mapping):
        pairs = (f"{key}={_scalar(item)}" for key, item in value.items())
        return ", ".join(pairs) or "(none)"
    if isinstance(value, tuple):
        return ", ".join(value) or "(none)"
    return _scalar(value)


def _table(table: Mapping[str, str]) -> str:
    """Headers or query parameters; a value whose name looks like a credential is masked."""
    pairs = (
        f"{key}={redact.mask_secret(item) if looks_secret(key) else item}"
        for key, item in table.items()
    )
    return ", ".join(pairs) or "(none)"


def _scalar(value: object) -> str:
    if value is None:
        return "(not set)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _request_class(request_class: RequestClass) -> str:
    bound = request_class.max_output_tokens
    scope = f"<={bound} tok" if bound is not None else "rest"
    return f"{request_class.name} ({scope}) {request_class.ttft_target_ms:g} ms"


def init(folder: Path, out: TextIO, err: TextIO) -> int:
    """Write config.toml and settings.json into `folder` (0600, in a 0700 folder: the config
    may come to hold a key); an existing file is left alone."""
    with locations.private_files():
        return _write_examples(folder, out, err)


def _write_examples(folder: Path, out: TextIO, err: TextIO) -> int:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as problem:
        error(f"cannot create {folder}: {problem.strerror}", err)
        return EXIT_USAGE
    for name, content in (
        ("config.toml", CONFIG_EXAMPLE_TOML),
        ("settings.json", SETTINGS_EXAMPLE_JSON),
    ):
        target = folder / name
        try:
            with target.open("x", encoding="utf-8", newline="\n") as handle:  # "x": never clobber
                handle.write(content)
        except FileExistsError:
            print(f"skipped {target} (it already exists; left unchanged)", file=out)
            continue
        except OSError as problem:
            error(f"cannot write {target}: {problem.strerror}", err)
            return EXIT_USAGE
        print(f"wrote   {target}", file=out)
    print("Edit them, then run `firsttoken config` to see the effective values.", file=out)
    return EXIT_OK
