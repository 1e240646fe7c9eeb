"""The embedded OpenAI-compatible demo endpoint: simulated latency behind real HTTP on loopback.

Its own package, apart from the engine: the engine measures any server, this one is a server.
The latency model and its presets import in a few milliseconds (config validation uses the
preset names); the server and its thread load on first use of their names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui.demo.latency_model import PRESETS, LatencyModel, latency_model

if TYPE_CHECKING:
    from tui.demo.server import DEMO_MODEL_ID, DemoServer, count_prompt_tokens
    from tui.demo.thread import DemoThread, start_demo_in_thread

__all__ = [
    "DEMO_MODEL_ID",
    "PRESETS",
    "DemoServer",
    "DemoThread",
    "LatencyModel",
    "count_prompt_tokens",
    "latency_model",
    "start_demo_in_thread",
]

_LAZY = {
    "DEMO_MODEL_ID": "tui.demo.server",
    "DemoServer": "tui.demo.server",
    "count_prompt_tokens": "tui.demo.server",
    "DemoThread": "tui.demo.thread",
    "start_demo_in_thread": "tui.demo.thread",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'tui.demo' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module_name), name)
