"""The engine client's loop thread: stopping it leaves no task behind.

A model list still in flight when the app closes is cancelled, and a cancelled request needs
a few more turns of its loop to end (the client closes its connection). Stopped before that,
the loop would keep the task pending, and Python would destroy it with a warning as the
process ends.
"""

from __future__ import annotations

import asyncio

from tui.session.network import NetworkLoop


async def test_stopping_the_loop_ends_what_still_runs_on_it() -> None:
    network = NetworkLoop()
    cleaned_up = asyncio.Event()
    loop = asyncio.get_running_loop()

    async def request_in_flight() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            for _ in range(5):  # cleaning up takes a few turns of the loop
                await asyncio.sleep(0)
            loop.call_soon_threadsafe(cleaned_up.set)
            raise

    network.submit(request_in_flight())
    await asyncio.to_thread(network.stop)
    assert cleaned_up.is_set()
    assert not network.loop.is_running()
    assert asyncio.all_tasks(network.loop) == set()
