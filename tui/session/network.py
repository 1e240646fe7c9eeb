"""An asyncio loop in a daemon thread, where the engine client runs for the app.

The request leaves the moment Enter is handled, whatever the UI is busy mounting or painting,
and every receipt time is stamped by a loop that never waits for a frame. `ask` and the other
headless commands have no UI loop to protect: they run the client on their own loop instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class NetworkLoop:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="firsttoken-network", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the network loop and await its result from the calling loop."""
        return await asyncio.wrap_future(self.submit(coro))

    def call_soon(self, callback: Callable[..., object], *args: Any) -> None:
        self.loop.call_soon_threadsafe(callback, *args)

    def stop(self, timeout: float = 2.0) -> None:
        """Cancel what still runs on the loop (a model list nobody waits for any more), let
        it end, then stop the loop and its thread. Stopped with a task pending, the loop
        would leave it to be destroyed with a warning when the process ends."""
        if self.loop.is_running():
            ended = asyncio.run_coroutine_threadsafe(_cancel_the_others(), self.loop)
            with contextlib.suppress(concurrent.futures.TimeoutError):
                ended.result(timeout)
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)


async def run_on(network: NetworkLoop | None, coro: Coroutine[Any, Any, T]) -> T:
    """`coro` on the network loop when there is one, else on the calling loop."""
    if network is None:
        return await coro
    return await network.call(coro)


async def _cancel_the_others() -> None:
    """Cancel every other task of the running loop and wait for them to end."""
    current = asyncio.current_task()
    others = [task for task in asyncio.all_tasks() if task is not current]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)
