"""Effective configuration: discovery, precedence, validation and where each value came from.

Precedence, highest first: CLI flags > environment (FIRSTTOKEN_*, then OPENAI_API_KEY /
OPENAI_BASE_URL) > settings.json > config.toml > defaults. The schema lives in
tui/config_schema.py, file reading in tui/config_files.py. Never imports Textual.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui import config_provider
from tui.config_files import CONFIG_NAME, SETTINGS_NAME, Setting, discover, read_settings
from tui.config_schema import PRIORITY_ITEMS, ConfigError, Invalid, show, show_url, text, url
from tui.engine.http.proxy import ProxyRules
from tui.engine.metrics.record import DEFAULT_REQUEST_CLASSES, RequestClass, Thresholds
from tui.engine.text import redact

if TYPE_CHECKING:
    from tui.engine.tokens.trim import TrimPolicy
    from tui.providers import Provider

__all__ = ["Config", "ConfigError", "ConfigFlags", "load_config", "mask_secret"]

NO_KEY = "(none: the embedded demo endpoint is used)"
# Where requests go with a key but no base_url (as the official SDKs do).
DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class ConfigFlags:
    """The global command-line flags that feed the config (highest precedence)."""

    config_path: Path | None = None
    settings_path: Path | None = None
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    provider: str | None = None

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> ConfigFlags:
        return cls(
            config_path=getattr(args, "config", None),
            settings_path=getattr(args, "settings", None),
            base_url=getattr(args, "base_url", None),
            model=getattr(args, "model", None),
            api_key_env=getattr(args, "api_key_env", None),
            provider=getattr(args, "provider", None),
        )


@dataclass(frozen=True)
class Config:
    """Every field has a default, so `Config()` is the all-defaults config (handy in tests:
    `dataclasses.replace(Config(), base_url=...)`)."""

    provider: str | None = None  # a preset (tui/providers.py) under everything set explicitly
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)  # secret: show via mask_secret()
    api_key_header: str | None = None  # the key in this header instead of Authorization: Bearer
    extra_headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    extra_query: Mapping[str, str] = field(default_factory=dict, repr=False)
    proxies: ProxyRules = field(default_factory=ProxyRules, repr=False)  # from the environment
    model: str = "gpt-4o-mini"
    models: tuple[str, ...] = ()
    timeout_seconds: float = 60.0
    context_window: int | None = None
    max_retries: int = 2
    streaming: bool = True
    chunk_timeout_ms: int = 800
    stall_timeout_ms: int = 30_000
    temperature: float = 0.1
    max_tokens: int = 2048
    record_ttft: bool = True
    token_budget: int = 6000
    reserve_for_output: int = 2000
    keep_system: bool = True
    keep_latest_user: bool = True
    trim_strategy: str = "priority"
    priority_order: tuple[str, ...] = PRIORITY_ITEMS
    history_keep_head: int = 2
    history_keep_tail: int = 4
    ttft_warn_ms: float = 1200.0
    ttft_error_ms: float = 2500.0
    log_every_request: bool = True
    request_classes: tuple[RequestClass, ...] = DEFAULT_REQUEST_CLASSES
    demo_preset: str = "cpu-small"
    demo_overrides: Mapping[str, float | bool] = field(default_factory=dict)
    # [llm.kv_cache]: the cache's element type, and the configured model's attention shape
    # when no preset names it (architecture, or layers / kv_heads / head_dim / ...).
    kv_cache: Mapping[str, Any] = field(default_factory=dict)
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)
    searched: tuple[str, ...] = field(default=(), compare=False)
    config_path: Path | None = field(default=None, compare=False)
    settings_path: Path | None = field(default=None, compare=False)
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @property
    def uses_demo_endpoint(self) -> bool:
        return self.api_key is None and self.base_url is None

    @property
    def output_limit(self) -> int:
        """The max_tokens actually sent: never more than what is reserved for the output."""
        return min(self.max_tokens, self.reserve_for_output)

    @property
    def trim_enabled_by_default(self) -> bool:
        return self.trim_strategy != "none"

    def thresholds(self) -> Thresholds:
        return Thresholds(warn_ms=self.ttft_warn_ms, error_ms=self.ttft_error_ms)

    def trim_policy(self) -> TrimPolicy:
        from tui.engine.tokens.trim import TrimPolicy  # lazy: config stays importable on its own

        return TrimPolicy(
            strategy=self.trim_strategy,
            keep_system=self.keep_system,
            keep_latest_user=self.keep_latest_user,
            priority_order=self.priority_order,
            history_keep_head=self.history_keep_head,
            history_keep_tail=self.history_keep_tail,
        )

    def origin(self, name: str) -> str:
        return self.origins.get(name, "default")

    def where_set(self, name: str, toml_key: str) -> str:
        """Where a config.toml key's value comes from, for a message that says what to raise:
        "stall_timeout_ms under [llm.streaming] in /home/me/.config/firsttoken/config.toml", or
        for a default, where it would go (the config file found, or `firsttoken config init`)."""
        table, _, key = toml_key.rpartition(".")
        origin = self.origin(name)
        if origin.startswith(f"{CONFIG_NAME}:") and self.config_path is not None:
            return f"{key} under [{table}] in {self.config_path}"
        if self.config_path is not None:
            return f"{key} (default {getattr(self, name):g}) under [{table}] in {self.config_path}"
        return (
            f"{key} (default {getattr(self, name):g}) under [{table}] in config.toml "
            "(`firsttoken config init` writes one)"
        )


# Fields that describe the loading itself rather than a setting (no origin of their own).
_META_FIELDS = ("origins", "searched", "config_path", "settings_path", "warnings")
SETTING_FIELDS = tuple(f.name for f in fields(Config) if f.name not in _META_FIELDS)


def mask_secret(secret: str | None) -> str:
    """The key as `config` shows it: masked, or what happens without one."""
    return NO_KEY if secret is None else redact.mask_secret(secret)


def load_config(
    flags: ConfigFlags | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Config:
    """Discover, read, layer and check the configuration. Raises ConfigError (one line)."""
    flags = flags or ConfigFlags()
    env = os.environ if env is None else env
    cwd = cwd or Path.cwd()
    searched: list[str] = []
    warnings: list[str] = []
    config_source = discover(
        CONFIG_NAME, flags.config_path, "--config", env, "FIRSTTOKEN_CONFIG", cwd, searched,
        warnings,
    )  # fmt: skip
    settings_source = discover(
        SETTINGS_NAME, flags.settings_path, "--settings", env, "FIRSTTOKEN_SETTINGS", cwd,
        searched, warnings,
    )  # fmt: skip
    defaults = Config()
    values: dict[str, Any] = {name: getattr(defaults, name) for name in SETTING_FIELDS}
    origins = dict.fromkeys(SETTING_FIELDS, "default")
    mapped: dict[str, dict[str, Any]] = {"demo_overrides": {}, "kv_cache": {}}

    # Lowest layer first, so settings.json wins over config.toml where they overlap.
    layers: list[list[Setting]] = [
        read_settings(source, env, warnings)
        for source in (config_source, settings_source)
        if source is not None
    ]
    provider = _provider(flags, layers)
    if provider is not None:
        layers.insert(0, config_provider.provider_layer(provider, env))
    layers.append(_environment(flags, env, provider is None or provider.name == "openai"))
    layers.append(_flags(flags, env))
    for layer in layers:
        for setting in layer:
            if setting.into is not None:
                mapped[setting.field][setting.into] = setting.value
            elif setting.field in _MERGED:  # header and query tables add up, the later wins
                values[setting.field] = {**values[setting.field], **setting.value}
            else:
                values[setting.field] = setting.value
            origins[setting.field] = _merge_origin(origins[setting.field], setting)
    values.update(mapped)
    if provider is not None:
        if values["base_url"] is None:
            raise config_provider.missing_base_url(provider)
        window = provider.context_windows.get(values["model"])
        if window is not None and origins["context_window"] == "default":
            values["context_window"] = window
            origins["context_window"] = f"provider:{provider.name} ({values['model']})"
    values["proxies"], origins["proxies"] = config_provider.proxies(env, warnings)

    file_keys = [
        s.origin for layer in layers for s in layer if s.field == "api_key" and s.value is not None
    ]
    if origins["api_key"] == "env:OPENAI_API_KEY" and file_keys[0].startswith(CONFIG_NAME):
        # A general-purpose OpenAI key silently replacing the file's key for another provider
        # would send it to the wrong endpoint: say so (without showing either key).
        warnings.append(
            f"the API key from {file_keys[0]} is overridden by $OPENAI_API_KEY; unset it, "
            "or use FIRSTTOKEN_API_KEY or --api-key-env to choose"
        )
    _check_combinations(values, origins, warnings)
    return Config(
        **values,
        origins=origins,
        searched=tuple(searched),
        config_path=config_source.path if config_source else None,
        settings_path=settings_source.path if settings_source else None,
        warnings=tuple(warnings),
    )


# Tables whose entries add up across layers (a preset's headers and the file's).
_MERGED = ("extra_headers", "extra_query")


def _merge_origin(previous: str, setting: Setting) -> str:
    if setting.field in _MERGED and previous != "default":
        return f"{previous} + {setting.origin}"
    if setting.into is None or previous == "default":
        return setting.origin if setting.into is None else setting.origin.rsplit(".", 1)[0]
    return previous


def _provider(flags: ConfigFlags, layers: list[list[Setting]]) -> Provider | None:
    """The preset chosen by --provider, else by the files' [llm] provider (the later file wins)."""
    if flags.provider is not None:
        return config_provider.preset(flags.provider, "--provider")
    named = [setting for layer in layers for setting in layer if setting.field == "provider"]
    return config_provider.preset(named[-1].value, named[-1].origin) if named else None


def _environment(flags: ConfigFlags, env: Mapping[str, str], openai: bool) -> list[Setting]:
    """FIRSTTOKEN_* first, then OPENAI_* (not with another provider's preset: an OpenAI key
    must not go to another provider); empty variables count as unset."""
    found: list[Setting] = []
    fallbacks = ("OPENAI_API_KEY",) if openai else ()
    if not flags.api_key_env:
        key_var = _first_set(env, "FIRSTTOKEN_API_KEY", *fallbacks)
        if key_var:
            found.append(Setting("api_key", env[key_var].strip(), f"env:{key_var}"))
    url_var = _first_set(env, "FIRSTTOKEN_BASE_URL", *(("OPENAI_BASE_URL",) if openai else ()))
    if url_var:
        found.append(
            Setting("base_url", _checked(url, env[url_var], f"${url_var}"), f"env:{url_var}")
        )
    if _first_set(env, "FIRSTTOKEN_MODEL"):
        found.append(Setting("model", env["FIRSTTOKEN_MODEL"].strip(), "env:FIRSTTOKEN_MODEL"))
    return found


def _flags(flags: ConfigFlags, env: Mapping[str, str]) -> list[Setting]:
    found: list[Setting] = []
    if flags.api_key_env:
        name = flags.api_key_env
        if not env.get(name, "").strip():
            raise ConfigError(
                f"--api-key-env {name}: the environment variable {name} is not set or empty; "
                "export it or drop the flag"
            )
        found.append(Setting("api_key", env[name].strip(), f"env:{name} (--api-key-env)"))
    if flags.base_url is not None:
        found.append(Setting("base_url", _checked(url, flags.base_url, "--base-url"), "flag"))
    if flags.model is not None:
        found.append(Setting("model", _checked(text, flags.model, "--model"), "flag"))
    if flags.provider is not None:
        found.append(Setting("provider", flags.provider, "flag"))
    return found


def _first_set(env: Mapping[str, str], *names: str) -> str | None:
    return next((name for name in names if env.get(name, "").strip()), None)


def _checked(check: Any, value: str, where: str) -> Any:
    try:
        return check(value)
    except Invalid as invalid:
        shown = show_url(value) if check is url else show(value)
        raise ConfigError(f"{where} = {shown}: expected {invalid.expected}") from None


def _check_combinations(
    values: dict[str, Any], origins: dict[str, str], warnings: list[str]
) -> None:
    def named(name: str) -> str:
        return f"{name} {values[name]:g} ({origins[name]})"

    if values["ttft_warn_ms"] > values["ttft_error_ms"]:
        raise ConfigError(
            f"{named('ttft_warn_ms')} is above {named('ttft_error_ms')}; "
            "the warn threshold must not exceed the error threshold"
        )
    if values["stall_timeout_ms"] < values["chunk_timeout_ms"] and origins["stall_timeout_ms"] == (
        "default"
    ):
        # A chunk timeout raised past the default stall limit (files written before the stall
        # limit existed): the stall limit follows it rather than refusing the file.
        values["stall_timeout_ms"] = values["chunk_timeout_ms"]
    elif values["stall_timeout_ms"] < values["chunk_timeout_ms"]:
        raise ConfigError(
            f"{named('stall_timeout_ms')} is below {named('chunk_timeout_ms')}; a gap over "
            "chunk_timeout_ms is a pause the reply survives, one over stall_timeout_ms ends it: "
            "raise stall_timeout_ms"
        )
    window = values["context_window"]
    if window is not None and values["token_budget"] + values["reserve_for_output"] > window:
        total = values["token_budget"] + values["reserve_for_output"]
        raise ConfigError(
            f"{named('token_budget')} + {named('reserve_for_output')} = {total} exceeds "
            f"{named('context_window')}; lower the budget or the reserve"
        )
    shape = set(values["kv_cache"]) - {"type", "architecture"}
    needed = (
        {"layers", "latent_dim"} if "latent_dim" in shape else {"layers", "kv_heads", "head_dim"}
    )
    if shape and not needed <= shape:
        missing = ", ".join(sorted(needed - shape))
        raise ConfigError(
            f"{origins['kv_cache']} describes an architecture without "
            f'{missing}: set {missing} too, or name a preset with architecture = "..."'
        )
    if shape and "architecture" in values["kv_cache"]:
        raise ConfigError(
            f"{origins['kv_cache']} names a preset architecture and its own "
            "shape: keep one of them"
        )
    key = values["api_key"]
    if key is not None and not key.isascii():
        warnings.append(
            f"the API key from {origins['api_key']} contains non-ASCII characters (still the "
            "article's placeholder?); HTTP cannot send it: put your real key there or in "
            "FIRSTTOKEN_API_KEY"
        )
    classes = values["request_classes"]
    for index, request_class in enumerate(classes[:-1]):
        if request_class.max_output_tokens is None:
            later = ", ".join(c.name for c in classes[index + 1 :])
            warnings.append(
                f"{origins['request_classes']}: class {request_class.name} has no "
                f"max_output_tokens, so it catches every request and {later} never apply; "
                "put the catch-all class last"
            )
            break
