"""A race's targets as the user writes them, and the config each one runs with.

    MODEL                    the configured endpoint (the embedded demo when none is set)
    MODEL@BASE_URL           another endpoint (http:// or https://)
    PROVIDER:MODEL           a provider preset (`--provider`'s names), its key from its variable

each optionally followed by settings, comma-separated: `trim=on|off`, `stream=on|off`,
`budget=N`. `demo-cpu-small,trim=off` and `demo-cpu-small,trim=on` are two targets: the same
model, trimmed and not. A target's label is what the user wrote, so it names the target in
every table, JSON object and record. The key comes from the usual places for each endpoint:
the provider's variable, FIRSTTOKEN_API_KEY, the config files (tui/config.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui.providers import PROVIDERS

if TYPE_CHECKING:
    from tui.config import Config, ConfigFlags

SWITCHES = {"on": True, "off": False}
SETTINGS = ("trim", "stream", "budget")


class TargetError(ValueError):
    """One line naming the target and what is wrong with it."""


@dataclass(frozen=True)
class RaceTarget:
    label: str  # as written
    model: str
    base_url: str | None = None
    provider: str | None = None
    trim: bool | None = None  # None: the config's
    stream: bool | None = None
    budget: int | None = None


def parse_target(text: str) -> RaceTarget:
    label = text.strip()
    if not label:
        raise TargetError("race: an empty target; write MODEL, MODEL@BASE_URL or PROVIDER:MODEL")
    head, *settings = label.split(",")
    switches: dict[str, bool] = {}
    budget: int | None = None
    for setting in settings:
        key, sep, value = setting.strip().partition("=")
        if not sep or key not in SETTINGS:
            raise TargetError(
                f"race: target {label!r}: unknown setting {setting.strip()!r}; "
                "use trim=on|off, stream=on|off or budget=N"
            )
        if key == "budget":
            if not value.isdigit() or int(value) < 1:
                raise TargetError(f"race: target {label!r}: budget={value!r} is not a token count")
            budget = int(value)
        elif value in SWITCHES:
            switches[key] = SWITCHES[value]
        else:
            raise TargetError(f"race: target {label!r}: {key}={value!r}; write {key}=on or off")
    model, at, base_url = head.partition("@")
    if at and not base_url.startswith(("http://", "https://")):
        raise TargetError(
            f"race: target {label!r}: {base_url!r} is not a base URL (http:// or https://)"
        )
    provider: str | None = None
    prefix, colon, rest = model.partition(":")
    if colon and not at and prefix in PROVIDERS:
        provider, model = prefix, rest
    if not model.strip():
        raise TargetError(f"race: target {label!r} names no model")
    return RaceTarget(
        label=label,
        model=model.strip(),
        base_url=base_url or None,
        provider=provider,
        trim=switches.get("trim"),
        stream=switches.get("stream"),
        budget=budget,
    )


def parse_targets(texts: Sequence[str]) -> list[RaceTarget]:
    targets = [parse_target(text) for text in texts]
    if len(targets) < 2:
        raise TargetError("race: name at least two targets (firsttoken race MODEL MODEL …)")
    labels = [target.label for target in targets]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise TargetError(f"race: {twice[0]!r} is named twice; a race compares different targets")
    return targets


def target_config(target: RaceTarget, base: Config, flags: ConfigFlags) -> Config:
    """The config `target` runs with: `base` (the one already loaded) with the target's model,
    or for a target on another endpoint or provider, the user's files and environment loaded
    again with those in place of the flags' (ConfigError when that does not load)."""
    if not target.base_url and not target.provider:
        return dataclasses.replace(base, model=target.model)
    from tui.config import load_config

    changed = dataclasses.replace(
        flags, model=target.model, base_url=target.base_url, provider=target.provider
    )
    return load_config(changed)
