"""What each streamed write costs the screen, headless: the 4,000-token demo reply appended to
the app's chat in fixed steps, with the time Textual spends laying out, painting and drawing the
chat's scrollbar, and how many layouts and frames it took.

Run: python -m benchmarks.bench_reply_frames [--step 150 --step 25] [--rounds 3]

The default measures 150-character writes, then 25-character ones, and saves both as the
`reply-frames` result (benchmarks/results.py); --step narrows it to the steps given.

A/B between two checkouts: run it from each checkout's root in turn (the figures are for
whichever `tui` is imported, and `python -m` imports the current directory's). Wall-clock on a
shared machine: compare medians from runs made one after the other, not single figures.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.screen import Screen

import tui.app.app
from benchmarks.results import command_line, save
from tui.app.chat.chat_log import ChatLog
from tui.app.chat.message_view import AssistantMessage
from tui.app.render.growth_repaint import GrowthAwareScreen
from tui.app.render.steady_scrollbar import SteadyScrollBar
from tui.demo.reply import offline_reply

STEPS = [150, 25]
# What is timed: the label printed, the key saved (ms in all).
TIMED = {"layout + its frame": "layout_ms", "frames": "frames_ms", "scrollbar": "scrollbar_ms"}


class ChatOnly(App[None]):
    """The app's chat pane with its stylesheet and main screen."""

    CSS_PATH = Path(tui.app.app.__file__).with_name("app.tcss")

    def get_default_screen(self) -> GrowthAwareScreen:
        return GrowthAwareScreen()

    def compose(self) -> ComposeResult:
        yield ChatLog(id="chat")


def timed(owner: type, name: str, totals: dict[str, list[float]], label: str) -> Callable[[], None]:
    """Time every call of owner.name into totals[label] (ms); returns the undo."""
    original = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            totals[label].append((time.perf_counter() - started) * 1000)

    setattr(owner, name, wrapper)
    return lambda: setattr(owner, name, original)


async def one_round(text: str, step: int) -> dict[str, float]:
    totals: dict[str, list[float]] = defaultdict(list)
    undo = [
        timed(Screen, "_refresh_layout", totals, "layout + its frame"),
        timed(Compositor, "render_update", totals, "frames"),
        timed(SteadyScrollBar, "render_lines", totals, "scrollbar"),
    ]
    try:
        app = ChatOnly()
        async with app.run_test(size=(130, 36)) as pilot:
            reply = AssistantMessage(1)
            await app.query_one(ChatLog).mount(reply)
            await pilot.pause()
            totals.clear()
            writes = 0
            for offset in range(0, len(text), step):
                await reply.markdown.append(text[offset : offset + step])
                await pilot.pause()
                writes += 1
    finally:
        for restore in undo:
            restore()
    figures = {f"{label} ms": sum(totals[label]) for label in TIMED}
    figures["layouts per write"] = len(totals["layout + its frame"]) / writes
    figures["frames per write"] = len(totals["frames"]) / writes
    return figures


async def measure(text: str, step: int, rounds: int) -> dict[str, float]:
    """One step's medians over the rounds, printed; the figures."""
    results = [await one_round(text, step) for _ in range(rounds)]
    print(f"4,000-token demo reply in {step}-character writes, {rounds} rounds, medians:")
    medians = {key: statistics.median(result[key] for result in results) for key in results[0]}
    for key, value in medians.items():
        print(f"  {key:24s} {value:8.1f}" if "ms" in key else f"  {key:24s} {value:8.2f}")
    figures = {saved: round(medians[f"{label} ms"], 1) for label, saved in TIMED.items()}
    figures["layouts_per_write"] = round(medians["layouts per write"], 3)
    figures["frames_per_write"] = round(medians["frames per write"], 3)
    figures["writes"] = len(range(0, len(text), step))
    return figures


def ms(value: float) -> str:
    """`36 ms`, `1,234 ms`, `4.2 ms`: one decimal below 20."""
    return f"{value:.1f} ms" if value < 20 else f"{value:,.0f} ms"


def sentence(step: int, figures: dict[str, float]) -> str:
    """One step's part of the `measured` sentence."""
    return (
        f"{step}-character writes: layout with its frame {figures['layout_ms'] / 1000:.2f} s in "
        f"all, {figures['layouts_per_write']:.2f} layouts and {figures['frames_per_write']:.2f} "
        f"frames per write, the scrollbar {ms(figures['scrollbar_ms'])}"
    )


async def main(steps: list[int], rounds: int) -> None:
    text = "".join(offline_reply(4_000, 2_000.0))
    measured = {step: await measure(text, step, rounds) for step in steps}
    figures = {
        "characters": len(text),
        "rounds": rounds,
        "steps": {str(step): f for step, f in measured.items()},
        "measured": "; ".join(sentence(step, f) for step, f in measured.items())
        + f" (medians of {rounds} round{'s' if rounds != 1 else ''})",
    }
    save("reply-frames", command_line("benchmarks.bench_reply_frames"), figures)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--step",
        type=int,
        action="append",
        help="characters per write; again for more (default: 150, then 25)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    sys.exit(asyncio.run(main(arguments.step or STEPS, arguments.rounds)))
