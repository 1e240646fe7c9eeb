"""Mounting a reply's Markdown blocks: the reply widget vs Textual's stock Markdown, headless.

Run: python -m benchmarks.bench_block_mount [--rounds 5]

Streams the 4,000-token demo reply into each widget in 3,000-character appends (as the app's
writer does late in a fast reply), then times the last append (the tail the user waits for at
the end of a stream) and the one full `update()` the app does when a reply ends. The reply
widget differs from the stock one in two ways: its blocks share their inline styles through
the document (`InlineStylesFromDocument`) instead of a stylesheet pass per block and class,
and a growing block does not ask for a second layout (`single_layout.py`; this shows in the
appends, which let each layout run). Figures only: medians and the ratio, saved as the
`block-mount` result (benchmarks/results.py).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from benchmarks.results import command_line, save
from tui.app.chat.message_view import AssistantMessage
from tui.app.render.reply_blocks import shared_parser
from tui.demo.reply import offline_reply

STEP = 3_000


def reply_text(tokens: int = 4_000) -> str:
    return "".join(offline_reply(tokens, 2_000.0))


class Holder(App[None]):
    def __init__(self, stock: bool) -> None:
        super().__init__()
        self.stock = stock

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            if self.stock:
                yield Markdown(parser_factory=shared_parser)
            else:
                yield AssistantMessage(1)


async def one_round(stock: bool, text: str) -> dict[str, float]:
    app = Holder(stock)
    async with app.run_test(size=(120, 40)) as pilot:
        markdown: Any = app.query_one(Markdown)
        cut = len(text) - STEP
        started = time.perf_counter()
        for offset in range(0, cut, STEP):
            await markdown.append(text[offset : min(offset + STEP, cut)])
            await pilot.pause()
        appends = time.perf_counter() - started
        started = time.perf_counter()
        await markdown.append(text[cut:])
        tail = time.perf_counter() - started
        started = time.perf_counter()
        await markdown.update(text)
        full = time.perf_counter() - started
    return {"appends": appends * 1000, "tail": tail * 1000, "full update": full * 1000}


async def main(rounds: int) -> None:
    text = reply_text()
    results: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for _ in range(rounds):
        for is_stock in (True, False):  # interleaved, so load falls on both alike
            results[is_stock].append(await one_round(is_stock, text))
    figures: dict[str, Any] = {"rounds": rounds, "step_characters": STEP, "characters": len(text)}
    said: dict[str, str] = {}
    for key in ("appends", "tail", "full update"):
        stock = statistics.median(r[key] for r in results[True])
        reply = statistics.median(r[key] for r in results[False])
        ratio = reply / stock
        print(f"{key:12s} stock {stock:6.1f} ms   reply widget {reply:6.1f} ms   ratio {ratio:.2f}")
        figures[key.replace(" ", "_")] = {
            "reply_ms": round(reply, 2),
            "stock_ms": round(stock, 2),
            "ratio": round(ratio, 3),
        }
        said[key] = f"{ms(reply)} vs {ms(stock)} ms ({ratio:.2f})"
    figures["measured"] = (
        f"tail {said['tail']}, full update {said['full update']}; the appends before them "
        f"{said['appends']}; reply widget vs stock, medians of {rounds} round"
        + ("s" if rounds != 1 else "")
    )
    save("block-mount", command_line("benchmarks.bench_block_mount"), figures)


def ms(value: float) -> str:
    """`10.3`, `214`, `1,234`: one decimal below 20 (the unit is the caller's)."""
    return f"{value:.1f}" if value < 20 else f"{value:,.0f}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args().rounds))
