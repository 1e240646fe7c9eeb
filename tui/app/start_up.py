"""Start-up after the first frame: the engine (its HTTP client, the token counter's
vocabulary, maybe the demo server), the first connection, the reply's modules, then the
garbage-collector policy.

The first frame imports nothing heavy: a thread opens the engine once it is out, the client's
`list_models()` then opens the keep-alive connection (so it is there before the first Enter),
and a second thread imports the reply's Markdown, markdown-it and pygments. Once both are
done the heap start-up built is frozen and the collector switched back on (`firsttoken`
starts with it off, see commands/open_app).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.worker import WorkerCancelled, WorkerFailed

from tui.session.network import run_on

if TYPE_CHECKING:
    from textual.app import App

    from tui.config import Config
    from tui.engine.chat.client import ChatClient
    from tui.engine.tokens.counter import TokenCounter
    from tui.session.engine_link import EngineLink
    from tui.wiring import Endpoint


class StartUp:
    """Runs the start-up steps after the first frame (`begin`), then calls `on_engine` once
    the engine is open and `on_settled` once start-up is over."""

    def __init__(
        self,
        app: App[Any],
        config: Config,
        engine: EngineLink,
        model: Callable[[], str],
        on_engine: Callable[[], None],
        on_settled: Callable[[], None],
    ) -> None:
        self._app = app
        self._config = config
        self._engine = engine
        self._model = model
        self._on_engine = on_engine
        self._on_settled = on_settled
        self.settled = False  # heap frozen, collector on

    def begin(self) -> None:
        self._app.run_worker(self._run(), group="start-up", exclusive=True)

    async def _run(self) -> None:
        engine = self._engine
        opening = self._app.run_worker(self._open_engine, thread=True, group="warm-up")
        try:
            engine.counter, engine.client, endpoint = await opening.wait()
        except WorkerFailed as failure:
            gc.enable()  # start-up is over either way
            self._app.notify(f"cannot start the engine: {failure.error}", severity="error")
            return
        except WorkerCancelled:
            return
        if endpoint.notice:
            self._app.notify(endpoint.notice, title="demo endpoint", timeout=8)
        engine.ready.set()
        self._on_engine()
        rendering = self._app.run_worker(
            self._warm_up_render, thread=True, group="warm-up-render", exit_on_error=False
        )
        await self._connect()
        with contextlib.suppress(WorkerFailed, WorkerCancelled):
            await rendering.wait()
        self._settle()

    def _open_engine(self) -> tuple[TokenCounter, ChatClient, Endpoint]:
        """Everything the first Enter would otherwise pay for, done before it (a thread)."""
        from tui.engine.chat.request_builder import build_request
        from tui.engine.tokens.counter import get_counter
        from tui.wiring import client_for, request_settings

        endpoint = self._engine.open()
        counter = get_counter(self._model()).load()
        client = client_for(self._config, endpoint, counter)
        build_request(
            [{"role": "user", "content": "warm up"}],
            request_settings(self._config),
            counter,
            trim_enabled=True,
            stream=True,
        )
        return counter, client, endpoint

    @staticmethod
    def _warm_up_render() -> None:
        """The first reply's widgets: markdown-it, Textual's Markdown module, pygments.
        Separate from the engine's warm-up so an early Enter never waits for it."""
        from tui.app.chat.message_view import warm_up_markdown

        warm_up_markdown()

    async def _connect(self) -> None:
        """list_models() opens the keep-alive connection and fills the model picker."""
        engine = self._engine
        assert engine.client is not None
        try:
            models = await run_on(engine.network, engine.client.list_models())
        except Exception:  # ClientError: the configured list stays; the first send reports it
            return
        finally:
            engine.connected = True
        if models:
            engine.listed_models = list(models)
            # The server's ids exactly (a request names one); the model picker shows them inert.
            engine.models = sorted(set(models) | set(self._config.models))

    def _settle(self) -> None:
        """Once connected and the reply's modules are imported (both in the background):
        freeze the heap, turn the collector on, then `on_settled` (the next turn's blocks).
        Not before the imports: the blocks import Textual's Markdown, and the UI loop would
        wait for the import thread's lock (a stall just after the prompt appears).

        Freezing keeps later full collections to what came after start-up: unfrozen, one
        lands inside a reply or under the user's typing, a visible pause. No collection
        first: with the collector off during start-up, one would stop the UI just after the
        prompt appears to free discarded styles and caches, which cost less kept than a
        stall while the first message is typed."""
        if self.settled:
            return
        self.settled = True
        gc.freeze()  # even with a reply under way (Enter came first): freezing stops nothing
        self._on_settled()
        gc.enable()  # off during start-up when started by the CLI (see open_app)
