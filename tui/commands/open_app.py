"""`firsttoken` with no subcommand: open the chat app (optionally with --messages FILE.json)."""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.commands._common import EXIT_OK, EXIT_USAGE, UsageError, error, load_messages, warning

if TYPE_CHECKING:
    from tui.config import Config
    from tui.engine.store.database import Store


def _chat_to_resume(
    store: Store | None, wanted: int, with_messages: bool
) -> tuple[int | None, str | None]:
    """The chat `--resume` opens (`wanted` 0: the app's last used chat; an id: any chat, an
    `ask` run's too), or why it cannot."""
    from tui.engine.store.database import APP_CHAT

    if with_messages:
        return None, "--resume and --messages both choose the conversation: use one of them"
    if store is None:
        return None, "--resume: the history file cannot be opened (see the warning above)"
    if wanted:
        if all(chat["id"] != wanted for chat in store.chats()):
            listed = "`firsttoken history --chats` lists them"
            return None, f"--resume {wanted}: no such chat ({listed})"
        return wanted, None
    last_used = store.chats(kind=APP_CHAT, limit=1)
    if last_used:
        return last_used[0]["id"], None
    if store.chats(limit=1):
        return None, (
            "--resume: no chat from the app yet, only `ask` runs: "
            "`firsttoken history --chats` lists them, `--resume ID` opens one"
        )
    return None, "--resume: no saved chats yet (a chat is saved when its first message is sent)"


def run(args: argparse.Namespace, config: Config) -> int:
    from tui.config import ConfigFlags

    messages: list[dict[str, Any]] | None = None
    path = getattr(args, "messages", None)
    if path is not None:
        try:
            messages = load_messages(Path(path))
        except UsageError as bad_file:
            error(str(bad_file))
            return EXIT_USAGE
    race = None
    if getattr(args, "race", None):
        from tui.race_targets import TargetError, parse_targets

        try:
            race = (parse_targets(args.race), bool(args.together), not args.warm)
        except TargetError as bad_target:
            error(str(bad_target))
            return EXIT_USAGE
    elif getattr(args, "together", False) or getattr(args, "warm", False):
        error("--together and --warm go with --race TARGET TARGET …")
        return EXIT_USAGE

    # The engine client runs on its own thread: let it take the GIL within 1 ms of a socket
    # event instead of CPython's default 5 ms, so a busy frame cannot hold a request or a token.
    sys.setswitchinterval(0.001)

    # No garbage collection during start-up: importing Textual and building the first screen
    # allocate hundreds of thousands of objects that all survive, and the collector would scan
    # them again and again before the first frame. The app freezes the start-up heap and
    # re-enables the collector once its warm-ups are done (tui/app/start_up.py).
    gc.disable()
    from tui.app.app import users_app

    def endpoint() -> Any:
        # Imported and opened by the app's warm-up thread, after the first frame: it may start
        # the demo server.
        from tui.wiring import open_endpoint

        return open_endpoint(config)

    from tui.engine.store.database import Store, StoreError

    store = None
    history_problem = None
    try:
        store = Store()
    except StoreError as unusable:
        warning(f"history not saved: {unusable}")  # seen once the app has ended
        history_problem = str(unusable)  # and in the chat while it runs

    resume: int | None = None
    wanted = getattr(args, "resume", None)
    if wanted is not None:
        resume, problem = _chat_to_resume(store, wanted, messages is not None)
        if problem:
            if store is not None:
                store.close()
            error(problem)
            return EXIT_USAGE

    app = users_app(
        config,
        endpoint,
        messages=messages,
        store=store,
        resume_chat=resume,
        history_problem=history_problem,
        flags=ConfigFlags.from_namespace(args),
        race=race,
    )
    app.end_on_signals()
    try:
        app.run()
    finally:
        if store is not None:
            store.close()
    if app.endpoint_notice:
        print(f"firsttoken: {app.endpoint_notice}", file=sys.stderr)
    if app.unsaved_at_exit:
        warning(app.unsaved_at_exit)  # shown inert by warning()
    # Ended by SIGTERM or SIGHUP: the shell's convention, 128 + the signal's number.
    return EXIT_OK if app.ended_by is None else 128 + app.ended_by
