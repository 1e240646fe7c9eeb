"""A reply's UI cost in a long chat: the app with a loaded conversation of N turns, headless,
streaming a 400-token reply from the demo endpoint (400 tokens/s, over real HTTP).

Run: python -m benchmarks.bench_long_chat [--turns 0,50,200] [--runs 3]

Every streamed write needs a layout pass, and a layout pass arranges every block laid out in
the chat, so the reply's cost grows with the chat unless the chat lays out only its latest
blocks (ChatLog.VISIBLE_MESSAGES). Prints, per chat length, the UI thread's CPU seconds for the
reply with that limit and with it lifted (every message laid out), the median of
--runs, and their ratio. Each past reply is the demo's 150-token Markdown (a heading, a list,
a code block, CJK), so each message is a dozen or so widgets. The figures are saved as the
`long-chat` result (benchmarks/results.py).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import time
from contextlib import nullcontext
from typing import Any

from benchmarks.results import command_line, save
from tui.app.app import FirstTokenApp
from tui.app.chat import chat_log
from tui.app.preferences import Preferences
from tui.config import ConfigFlags, load_config
from tui.demo.latency_model import latency_model
from tui.demo.reply import offline_reply
from tui.demo.thread import start_demo_in_thread
from tui.wiring import Endpoint

REPLY = "reply 400 tokens"
RATE = 400.0  # tokens/s


def conversation(turns: int) -> list[dict[str, Any]]:
    answer = "".join(offline_reply(150, 1_000.0))
    messages: list[dict[str, Any]] = []
    for turn in range(turns):
        messages.append({"role": "user", "content": f"question {turn}: and then?"})
        messages.append({"role": "assistant", "content": answer})
    return messages


async def _until(predicate: Any, timeout_s: float = 60.0) -> None:
    # Plain sleeps: Pilot.pause() would post a callback to every widget of the chat.
    deadline = time.perf_counter() + timeout_s
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.01)


async def reply_cpu(base_url: str, turns: int) -> float:
    """UI-thread CPU seconds from Enter until the reply is recorded and painted."""
    config = load_config(ConfigFlags(base_url=base_url), env={})
    # A budget the whole chat fits in: this measures rendering, not trimming.
    config = dataclasses.replace(config, token_budget=200_000)
    endpoint = Endpoint(base_url=base_url, api_key="demo", simulated=True)
    app = FirstTokenApp(
        config,
        lambda: nullcontext(endpoint),
        preferences=Preferences.in_memory(),
        prompt_history=None,
    )
    async with app.run_test(size=(120, 40)):
        await _until(lambda: app.chat.engine.connected and app.chat_screen.preview is not None)
        await app.chat_screen.load_messages(conversation(turns))  # as F6, --messages or --resume do
        screen = app.screen
        await _until(lambda: not screen._layout_required and not screen._dirty_widgets)
        await asyncio.sleep(0.5)
        turn = app.chat_screen.turn
        assert turn is not None, "the chat screen has no reply turn"
        before = time.thread_time()
        turn.submit(REPLY)
        await _until(lambda: app.chat_screen.last_record is not None and not app.chat_screen.busy)
        await asyncio.sleep(0.3)
        return time.thread_time() - before


def _spread(values: list[float]) -> str:
    """The median, and the range in brackets."""
    return f"{statistics.median(values):.2f}s ({min(values):.2f}-{max(values):.2f})"


async def main(turns: list[int], runs: int) -> None:
    demo = start_demo_in_thread(latency_model("instant", {"decode_tokens_per_s": RATE}))
    limit = chat_log.VISIBLE_MESSAGES
    chats: list[dict[str, Any]] = []
    try:
        print(f"{'turns':>6}  {'limited':>18}  {'all laid out':>18}  ratio of medians")
        for count in turns:
            limited, unlimited = [], []
            for _ in range(runs):  # alternating, so drift in the machine's load hits both
                chat_log.VISIBLE_MESSAGES = limit
                limited.append(await reply_cpu(demo.base_url, count))
                chat_log.VISIBLE_MESSAGES = 1_000_000
                unlimited.append(await reply_cpu(demo.base_url, count))
            chat_log.VISIBLE_MESSAGES = limit
            fast, slow = statistics.median(limited), statistics.median(unlimited)
            print(
                f"{count:>6}  {_spread(limited):>18}  {_spread(unlimited):>18}  {slow / fast:.1f}x"
            )
            chats.append(
                {
                    "turns": count,
                    "messages": 2 * count,
                    "limited": _figures(limited),
                    "all_laid_out": _figures(unlimited),
                    "ratio_of_medians": round(slow / fast, 2),
                }
            )
    finally:
        chat_log.VISIBLE_MESSAGES = limit
        demo.stop()
    figures = {
        "runs": runs,
        "reply_tokens": 400,
        "tokens_per_s": RATE,
        "visible_messages": limit,
        "chats": chats,
        "measured": "; ".join(_sentence(chat, limit) for chat in chats)
        + f" (UI-thread CPU, medians of {runs} run{'s' if runs != 1 else ''})",
    }
    save("long-chat", command_line("benchmarks.bench_long_chat"), figures)


def _figures(values: list[float]) -> dict[str, float]:
    """The median and the range, seconds."""
    return {
        "median_s": round(statistics.median(values), 3),
        "min_s": round(min(values), 3),
        "max_s": round(max(values), 3),
    }


def _sentence(chat: dict[str, Any], limit: int) -> str:
    """One chat length's part of the `measured` sentence: limited vs every message laid out,
    or only the limited figure when the whole chat fits the limit (both lay out the same)."""
    fast, slow = chat["limited"]["median_s"], chat["all_laid_out"]["median_s"]
    if chat["messages"] + 2 <= limit:
        return f"{chat['turns']} turns: {fast:.2f} s"
    return f"{chat['turns']} turns: {fast:.2f} vs {slow:.2f} s"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", default="0,50,200")
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main([int(part) for part in options.turns.split(",")], options.runs))
