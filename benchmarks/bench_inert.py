"""The terminal sanitiser's cost per streamed reply: `InertStream.feed` over a 4,000-delta reply.

Prints the time per reply and per delta for a clean reply (the fast path: no control at all)
and for one where every tenth delta carries an escape sequence, beside the cost of only
joining the same deltas (the floor any consumer pays). `python benchmarks/bench_inert.py`
"""

from __future__ import annotations

import argparse
import time

from tui.engine.text.inert import InertStream

WORDS = ("the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "streaming")


def reply(deltas: int, hostile_every: int | None) -> list[str]:
    out = []
    for index in range(deltas):
        word = " " + WORDS[index % len(WORDS)]
        if hostile_every and index % hostile_every == 0:
            word += "\x1b]52;c;aGk=\x07\x1b[2J\r\n"
        out.append(word)
    return out


def per_reply(pieces: list[str], repeats: int) -> tuple[float, float]:
    """(best seconds to sanitise the reply, best seconds to only join it)."""
    best, floor = float("inf"), float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        stream = InertStream()
        feed = stream.feed
        out = [feed(piece) for piece in pieces]
        out.append(stream.flush())
        "".join(out)
        best = min(best, time.perf_counter() - started)
        started = time.perf_counter()
        "".join([piece for piece in pieces])
        floor = min(floor, time.perf_counter() - started)
    return best, floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deltas", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    for name, every in (("clean", None), ("hostile 1 in 10", 10)):
        seconds, floor = per_reply(reply(args.deltas, every), args.repeats)
        print(
            f"{name:>16}: {seconds * 1000:.3f} ms per {args.deltas}-delta reply "
            f"({seconds / args.deltas * 1e9:.0f} ns per delta; joining alone "
            f"{floor * 1000:.3f} ms)"
        )


if __name__ == "__main__":
    main()
