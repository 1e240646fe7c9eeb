"""Which model the chat uses: the model belongs to the endpoint.

A model picked with F2 is remembered for the endpoint it was picked on (by base_url; the
embedded demo, whose port changes every run, is one endpoint), so starting against another
endpoint does not send it a model name it may not have. The chat starts with the model the
user set (`--model`, FIRSTTOKEN_MODEL, a config file), else the one remembered for this
endpoint, else the default; a reopened chat goes on with the model its last reply came from.

A model that did not come from the user's own setting (remembered, or a reopened chat's) is
checked against the endpoint's `GET /models` once that answers: one the endpoint does not list
is not used silently, the chat says so and falls back to the configured model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tui.app.preferences import Preferences
    from tui.config import Config

DEMO_ENDPOINT = "demo"  # the embedded demo endpoint's key, whatever port it got
CONFIGURED = "configured"  # config.model (a flag, the environment, a file or the default)
REMEMBERED = "remembered"  # picked with F2 on this endpoint in an earlier run
CHAT = "chat"  # the model of a reopened chat
PICKED = "picked"  # picked with F2 now


def endpoint_key(config: Config) -> str:
    """The endpoint as preferences remember it: its base_url without a trailing slash, or
    the embedded demo's own key."""
    if config.uses_demo_endpoint:
        return DEMO_ENDPOINT
    from tui.config import DEFAULT_BASE_URL

    return (config.base_url or DEFAULT_BASE_URL).rstrip("/")


@dataclass(frozen=True)
class ModelChoice:
    model: str
    source: str  # CONFIGURED, REMEMBERED, CHAT or PICKED

    @property
    def checked(self) -> bool:
        """Whether the endpoint's model list must confirm it (what the user did not set)."""
        return self.source in (REMEMBERED, CHAT)


def starting_model(config: Config, preferences: Preferences) -> ModelChoice:
    """The model a chat starts with on this endpoint."""
    if config.origin("model") == "default":  # a model the user set is used as set
        remembered = preferences.model_for(endpoint_key(config))
        if remembered:
            return ModelChoice(remembered, REMEMBERED)
    return ModelChoice(config.model, CONFIGURED)


def unlisted_notice(choice: ModelChoice, listed: Sequence[str] | None, fallback: str) -> str | None:
    """What to say when `choice` must be confirmed by the endpoint's list and is not in it
    (None: it may be used). No list (the endpoint has no /models): nothing to check."""
    if not choice.checked or not listed or choice.model in listed or choice.model == fallback:
        return None
    whose = "remembered for this endpoint" if choice.source == REMEMBERED else "this chat's model"
    return (
        f"{choice.model} ({whose}) is not among the models this endpoint lists: "
        f"using {fallback}, the configured model (f2 picks another)"
    )
