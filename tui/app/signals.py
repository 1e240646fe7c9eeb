"""SIGTERM and SIGHUP end the app as Ctrl+Q does: the reply under way is saved, the terminal
is given back (alternate screen left, mouse tracking off, cursor shown).

Python's default for both is to die on the spot, which leaves the terminal in the alternate
screen with mouse tracking on and loses the reply in flight. A TUI cannot outlive its terminal
either: on SIGHUP it quits even when started under `nohup` or a harness that ignores SIGHUP
(Textual's input thread would spin on the dead terminal at 100% CPU forever).

The handler does only signal-safe things: it has the saver thread save the reply's draft at
once, and asks the app's loop to exit. If quitting stalls (a dead terminal), SIGALRM's default
action ends the process after GRACE_S; the same signal a second time ends it at once.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any, Protocol


class EndsOnSignals(Protocol):
    """What the handlers need of the app."""

    ended_by: int | None  # the signal that ended it

    def exit(self) -> None: ...

    def save_drafts_soon(self) -> None: ...

GRACE_S = 5  # time to save the reply, close the connection and restore the terminal


def end_on_signals(app: EndsOnSignals) -> None:
    """Install the handlers (main thread, before `app.run()`)."""
    wanted = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]

    def on_signal(signum: int, _frame: Any) -> None:
        signal.signal(signum, signal.SIG_DFL)  # a second one ends the process at once
        app.save_drafts_soon()
        if hasattr(signal, "alarm"):
            signal.alarm(GRACE_S)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not running yet, or any more: nothing to save, nothing to give back
            os.kill(os.getpid(), signum)
            return
        app.ended_by = signum
        loop.call_soon_threadsafe(app.exit)  # signal-safe: a deque append and a wake-up

    for signum in wanted:
        signal.signal(signum, on_signal)
