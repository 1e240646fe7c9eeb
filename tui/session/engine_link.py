"""The engine as a surface holds it: the endpoint, the client (on the app's network loop, or
on the caller's loop headless), the token counter, the models the endpoint lists."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.engine.chat.client import ChatClient
    from tui.engine.tokens.counter import PromptCounter
    from tui.session.network import NetworkLoop
    from tui.wiring import Endpoint


class EngineLink:
    """`ready` is set once the client exists; `connected` once the endpoint answered (or
    failed) its model list, the first request the app makes."""

    def __init__(
        self,
        open_endpoint: Callable[[], AbstractContextManager[Endpoint]],
        models: list[str],
        network: NetworkLoop | None = None,
    ) -> None:
        # Opened by whoever starts the engine (the app's start-up thread): opening it may
        # import and start the demo server, which does not belong on the first frame's path.
        self.endpoint: Endpoint | None = None
        self._open_endpoint = open_endpoint
        self._endpoint_stack = ExitStack()
        self.network = network
        self.client: ChatClient | None = None
        self.counter: PromptCounter | None = None  # ServerCounts once the server counts
        self.models = models
        self.listed_models: list[str] | None = None  # what GET /models answered, if it did
        self.connected = False
        self.ready = asyncio.Event()

    def open(self) -> Endpoint:
        """The endpoint, opened now (once)."""
        if self.endpoint is None:
            self.endpoint = self._endpoint_stack.enter_context(self._open_endpoint())
        return self.endpoint

    async def close(self) -> None:
        """Close the client, stop the network loop and the demo server if one was started."""
        if self.client is not None:
            with contextlib.suppress(Exception):
                if self.network is not None:
                    await asyncio.wait_for(self.network.call(self.client.aclose()), 1.0)
                else:
                    await asyncio.wait_for(self.client.aclose(), 1.0)
        if self.network is not None:
            self.network.stop()
        self._endpoint_stack.close()
