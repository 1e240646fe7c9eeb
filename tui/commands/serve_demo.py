"""`firsttoken demo-server`: run the simulated OpenAI-compatible endpoint for any client."""

from __future__ import annotations

import argparse
import asyncio
import errno
import signal
from pathlib import Path
from typing import Any

from tui.commands._common import EXIT_USAGE, error
from tui.demo import DemoServer
from tui.demo.latency_model import LatencyModel, latency_model


def _error(message: str) -> int:
    error(message)
    return EXIT_USAGE


def run(args: argparse.Namespace, config: Any) -> int:
    preset_flag: str | None = getattr(args, "preset", None)
    preset = preset_flag or getattr(config, "demo_preset", None) or "cpu-small"
    overrides = getattr(config, "demo_overrides", None) or {}
    try:
        model = latency_model(preset, overrides)
    except ValueError as e:
        where = "--preset" if preset_flag else "the config's demo settings"
        return _error(f"{e} (from {where})")
    port = getattr(args, "port", 8000)
    port = 8000 if port is None else port
    log: Path | None = getattr(args, "log", None)
    try:
        return asyncio.run(_serve(model, port, log))
    except KeyboardInterrupt:  # Ctrl+C before the signal handler was installed
        return 0


async def _serve(model: LatencyModel, port: int, log: Path | None) -> int:
    server = DemoServer(model, port=port, request_log=log)
    try:
        await server.start()
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            return _error(
                f"port {port} on 127.0.0.1 is already in use; "
                "pick another with --port N (0 = any free port)"
            )
        return _error(
            f"cannot listen on 127.0.0.1:{port} ({e.strerror or e}); pick another with --port N"
        )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    handled = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, stop.set)
            handled.append(signum)
        except (NotImplementedError, RuntimeError):  # not the main thread, or Windows
            pass
    print(
        f"firsttoken demo endpoint (simulated, preset {model.preset}: {model.describe()}) "
        f"at {server.base_url} — Ctrl+C to stop",
        flush=True,
    )
    try:
        await stop.wait()
    finally:
        for signum in handled:
            loop.remove_signal_handler(signum)
        await server.stop()
    return 0
