"""The demo endpoint on its own event loop in a daemon thread, for sync callers and the app."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from pathlib import Path

from tui.demo.latency_model import LatencyModel
from tui.demo.server import DemoServer


class DemoThread:
    """A DemoServer on its own event loop in a daemon thread (for sync callers and the app)."""

    def __init__(
        self, server: DemoServer, loop: asyncio.AbstractEventLoop, thread: threading.Thread
    ):
        self.server = server
        self._loop = loop
        self._thread = thread
        self._final: list[dict] | None = None

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def root_url(self) -> str:
        return self.server.root_url

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def requests(self) -> list[dict]:
        """A copy of the request log, taken on the server's own loop (so it is consistent)."""
        if self._final is not None:
            return [dict(entry) for entry in self._final]

        async def snapshot() -> list[dict]:
            return [dict(entry) for entry in self.server.requests]

        return asyncio.run_coroutine_threadsafe(snapshot(), self._loop).result(timeout=5)

    def stop(self, timeout: float = 5.0) -> None:
        """Close the server and its connections, end the loop, join the thread. Idempotent."""
        if self._final is not None:
            return
        self._final = [dict(entry) for entry in self.server.requests]
        if not self._loop.is_closed():
            try:
                future = asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop)
                future.result(timeout=timeout)
            except (RuntimeError, concurrent.futures.TimeoutError):
                pass  # the loop is already gone or stuck: the daemon thread dies with us
            else:
                self._final = [dict(entry) for entry in self.server.requests]
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)

    def __enter__(self) -> DemoThread:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_demo_in_thread(
    model: LatencyModel, port: int = 0, request_log: Path | None = None, host: str = "127.0.0.1"
) -> DemoThread:
    """Start the demo endpoint in a daemon thread; returns once it is listening.

    Raises what binding raised (OSError for a port in use) in the caller's thread.
    """
    server = DemoServer(model, host=host, port=port, request_log=request_log)
    ready = threading.Event()
    failure: list[BaseException] = []
    loop = asyncio.new_event_loop()

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.start())
        except BaseException as e:  # handed to the caller, raised there
            failure.append(e)
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(server.stop())
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()

    thread = threading.Thread(target=run, name="firsttoken-demo-endpoint", daemon=True)
    thread.start()
    ready.wait()
    if failure:
        raise failure[0]
    return DemoThread(server, loop, thread)
