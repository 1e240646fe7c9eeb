"""From the effective Config to the engine's objects: where requests go (the configured API,
or the embedded demo endpoint when nothing is set), the client, and the request settings.

The engine takes value objects and never reads the config; this module is the one place that
turns one into the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.config import Config
    from tui.engine.chat.client import ChatClient
    from tui.engine.chat.request_builder import RequestSettings
    from tui.engine.metrics.kv_cache import KvModel
    from tui.engine.tokens.counter import TokenCounter

DEMO_API_KEY = "demo"  # the demo server accepts any key


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    api_key: str | None = None
    simulated: bool = False
    notice: str | None = None  # one line to show the user (the demo endpoint started)
    # A llama.cpp server (its provider preset, or the demo playing one): streamed requests ask
    # for its prompt progress.
    llamacpp: bool = False


@contextmanager
def open_endpoint(config: Config) -> Iterator[Endpoint]:
    """The endpoint for `config`; starts (and finally stops) the demo server when needed."""
    if not config.uses_demo_endpoint:
        from tui.config import DEFAULT_BASE_URL

        yield Endpoint(
            base_url=config.base_url or DEFAULT_BASE_URL,
            api_key=config.api_key,
            llamacpp=config.provider == "llamacpp",
        )
        return
    from tui.demo import latency_model, start_demo_in_thread

    model = latency_model(config.demo_preset, config.demo_overrides)
    demo = start_demo_in_thread(model)
    try:
        yield Endpoint(
            base_url=demo.base_url,
            api_key=DEMO_API_KEY,
            simulated=True,
            llamacpp=model.server == "llamacpp",
            notice=(
                "No API key or base_url configured: using the embedded demo endpoint at "
                f"{demo.base_url} (simulated latency, preset {config.demo_preset})."
            ),
        )
    finally:
        demo.stop()


def client_for(
    config: Config, endpoint: Endpoint, counter: TokenCounter | None = None
) -> ChatClient:
    """The engine's client for this endpoint, with the config's timeouts and thresholds."""
    from tui.engine.chat.client import ChatClient
    from tui.engine.chat.dialects import DialectMemory
    from tui.locations import dialects_path

    demo = endpoint.simulated
    return ChatClient(
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        timeout_s=config.timeout_seconds,
        chunk_timeout_ms=config.chunk_timeout_ms,
        stall_timeout_ms=config.stall_timeout_ms,
        stall_setting=config.where_set("stall_timeout_ms", "llm.streaming.stall_timeout_ms"),
        thresholds=config.thresholds(),
        request_classes=config.request_classes,
        max_retries=config.max_retries,
        simulated=endpoint.simulated,
        counter=counter,
        # The configured API's own settings; the embedded demo on loopback needs none of them.
        extra_headers=None if demo else config.extra_headers,
        extra_query=None if demo else config.extra_query,
        auth_header=None if demo else config.api_key_header,
        proxies=None if demo else config.proxies,
        dialects=DialectMemory(dialects_path()),
        prompt_progress=endpoint.llamacpp,
        kv_models=kv_models(config),
        context_window=config.context_window,
    )


def kv_models(config: Config) -> Callable[[str], KvModel | None]:
    """Each model's KV-cache shape: the configured model's from [llm.kv_cache] when it sets
    one, else the preset its id names (none: no KV figures, no guess)."""
    from tui.engine.metrics.architectures import architecture_for, preset_named
    from tui.engine.metrics.kv_cache import DEFAULT_CACHE_TYPE, Architecture, KvModel

    keys = dict(config.kv_cache)
    kind = str(keys.get("type", DEFAULT_CACHE_TYPE))
    configured: Architecture | None = None
    if "architecture" in keys:
        configured = preset_named(str(keys["architecture"]))
    elif "layers" in keys:
        configured = Architecture(
            config.model,
            int(keys["layers"]),
            int(keys.get("kv_heads", 1)),
            int(keys.get("head_dim", keys.get("latent_dim", 1))),
            keys.get("sliding_window"),
            int(keys.get("sliding_layers", 0)),
            keys.get("latent_dim"),
        )

    def model_for(model: str) -> KvModel | None:
        if configured is not None and model == config.model:
            return KvModel(configured, "config", kind)
        preset = architecture_for(model)
        return KvModel(preset, "preset", kind) if preset is not None else None

    return model_for


def request_settings(config: Config) -> RequestSettings:
    from tui.engine.chat.request_builder import RequestSettings

    return RequestSettings(
        model=config.model,
        temperature=config.temperature,
        max_tokens=config.output_limit,
        token_budget=config.token_budget,
        trim_policy=config.trim_policy(),
    )
