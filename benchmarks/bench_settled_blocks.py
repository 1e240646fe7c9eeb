"""What one streamed write costs at the start, middle and end of a long reply, headless: flat
is the goal. A 4,000-token reply (the prose demo reply, or one dense with code blocks or
lists, see benchmarks/render/dense_reply.py) is appended to the app's chat in writes of
`--step` tokens (40: a write every 80 ms at 500 tokens/s), and each write is timed from the
append until the screen has laid it out and painted it, in CPU time of this process.
Printed per reply: the median write in the first, middle and last tenth of the reply, end /
start, and all writes together.

Run: python -m benchmarks.bench_settled_blocks [--kinds prose,code,lists,mixed]
         [--density 20] [--step 40] [--rounds 2] [--compare]

--compare also runs each reply with settled blocks left live (every block laid out on every
write, as before they were folded), alternating with the folded runs. The figures are saved as
the `settled-blocks` result (benchmarks/results.py).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult

import tui.app.app
import tui.app.render.reply_blocks as reply_blocks
from benchmarks.render.dense_reply import dense_tokens
from benchmarks.results import command_line, save
from tui.app.chat.chat_log import ChatLog
from tui.app.chat.message_view import AssistantMessage
from tui.app.render.growth_repaint import GrowthAwareScreen
from tui.app.render.settled_blocks import arrange_blocks
from tui.demo.reply import offline_reply

FOLDED = reply_blocks.arrange_settled


def all_live(markdown: Any, fold: Any, blocks: Any, size: Any, optimal: bool) -> Any:
    return arrange_blocks(markdown, blocks, size, optimal)


class ChatOnly(App[None]):
    """The app's chat pane with its stylesheet and main screen."""

    CSS_PATH = Path(tui.app.app.__file__).with_name("app.tcss")

    def get_default_screen(self) -> GrowthAwareScreen:
        return GrowthAwareScreen()

    def compose(self) -> ComposeResult:
        yield ChatLog(id="chat")


def reply(kind: str, density: int) -> list[str]:
    if kind == "prose":
        return offline_reply(4_000, 500.0)
    return dense_tokens(kind, density, 4_000)


async def write_costs(tokens: list[str], step: int) -> list[float]:
    """CPU ms of each write, from the append until the screen is idle."""
    costs: list[float] = []
    app = ChatOnly()
    async with app.run_test(size=(120, 40)) as pilot:
        message = AssistantMessage(1)
        await app.query_one(ChatLog).mount(message)
        await pilot.pause()
        markdown = message.markdown
        for offset in range(0, len(tokens), step):
            started = time.process_time()
            await markdown.append("".join(tokens[offset : offset + step]))
            await painted(markdown)
            costs.append((time.process_time() - started) * 1000)
            await pilot.pause()  # (Textual's test pilot visits every widget: not timed)
    return costs


async def painted(widget: Any) -> None:
    """Return once the screen has laid out and painted what is pending."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def settle() -> None:
        if not done.done():
            done.set_result(None)

    widget.call_after_refresh(settle)
    await done


def tenths(costs: list[float]) -> tuple[float, float, float]:
    tenth = max(1, len(costs) // 10)
    middle = len(costs) // 2 - tenth // 2
    return (
        statistics.median(costs[:tenth]),
        statistics.median(costs[middle : middle + tenth]),
        statistics.median(costs[-tenth:]),
    )


async def main(kinds: list[str], density: int, step: int, rounds: int, compare: bool) -> None:
    modes = [("folded", FOLDED), ("all live", all_live)] if compare else [("folded", FOLDED)]
    print(f"4,000-token replies in {step}-token writes, CPU ms per write (median of each tenth),")
    print(f"dense replies at {density} code blocks or lists per 1,000 tokens, {rounds} rounds:")
    print(
        f"  {'reply':8s} {'settled blocks':15s} {'start':>7s} {'middle':>7s} {'end':>7s}"
        f" {'end/start':>9s} {'all writes':>10s}"
    )
    rows: list[dict[str, Any]] = []
    for kind in kinds:
        tokens = reply(kind, density)
        results: dict[str, list[tuple[float, float, float, float]]] = {m: [] for m, _ in modes}
        for _ in range(rounds):
            for mode, arrange in modes:
                reply_blocks.arrange_settled = arrange
                costs = await write_costs(tokens, step)
                results[mode].append((*tenths(costs), sum(costs)))
        reply_blocks.arrange_settled = FOLDED
        for mode, _ in modes:
            start, middle, end, total = (
                statistics.median(row[i] for row in results[mode]) for i in range(4)
            )
            print(
                f"  {kind:8s} {mode:15s} {start:7.1f} {middle:7.1f} {end:7.1f}"
                f" {end / start:9.2f} {total / 1000:9.2f}s"
            )
            rows.append(
                {
                    "kind": kind,
                    "settled_blocks": mode,
                    "start_ms": round(start, 2),
                    "middle_ms": round(middle, 2),
                    "end_ms": round(end, 2),
                    "end_over_start": round(end / start, 3),
                    "all_writes_s": round(total / 1000, 3),
                }
            )
    figures = {
        "step_tokens": step,
        "density": density,
        "rounds": rounds,
        "compare": compare,
        "replies": rows,
        "measured": sentence(rows, step, density, rounds),
    }
    save("settled-blocks", command_line("benchmarks.bench_settled_blocks"), figures)


def sentence(rows: list[dict[str, Any]], step: int, density: int, rounds: int) -> str:
    """What the run measured, the docs' way: each reply's start / middle / end, then every
    reply's writes in all (with --compare, the all-live figures in brackets)."""

    def three(row: dict[str, Any]) -> str:
        return " / ".join(f"{row[key]:.1f}" for key in ("start_ms", "middle_ms", "end_ms"))

    folded = [row for row in rows if row["settled_blocks"] == "folded"]
    live = {row["kind"]: row for row in rows if row["settled_blocks"] != "folded"}
    costs, totals = [], []
    for row in folded:
        other = live.get(row["kind"])
        costs.append(
            f"{row['kind']} {three(row)}" + (f" (all live {three(other)})" if other else "")
        )
        totals.append(
            f"{row['all_writes_s']:.2f} s"
            + (f" (all live {other['all_writes_s']:.2f} s)" if other else "")
        )
    dense = any(row["kind"] != "prose" for row in folded)
    run = f"{step}-token writes" + (f", {density} blocks per 1,000 tokens" if dense else "")
    run += f", medians of {rounds} round" + ("s" if rounds != 1 else "")
    return (
        f"CPU ms per write, start / middle / end: {', '.join(costs)}; "
        f"all writes {', '.join(totals)} ({run})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--kinds", default="prose,code,lists,mixed")
    parser.add_argument("--density", type=int, default=20)
    parser.add_argument("--step", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--compare", action="store_true")
    arguments = parser.parse_args()
    kinds = [kind for kind in arguments.kinds.split(",") if kind]
    sys.exit(
        asyncio.run(
            main(kinds, arguments.density, arguments.step, arguments.rounds, arguments.compare)
        )
    )
