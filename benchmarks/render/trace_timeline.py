"""Print a render trace (RENDER_TRACE, see profile_app.py) as one timeline per reply, in ms
from Enter: what the app did between the key, the server's tokens and the screen.

    python -m benchmarks.render.trace_timeline /tmp/trace.jsonl [--until final-on-screen]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

# Events logged once per layout request (RENDER_TRACE_LAYOUT) are summarised, not listed.
NOISY = {"wants-layout", "layout-message", "screen-tick"}


def replies(events: list[dict]) -> list[list[dict]]:
    """Split the events at each Enter (the harness's mark), keeping what follows it up to the
    next app's start ("main"): the next process's start-up is not part of this reply."""
    runs: list[list[dict]] = []
    current: list[dict] | None = None
    for event in sorted(events, key=lambda e: e["t"]):
        if event["kind"] == "enter":
            current = [event]
            runs.append(current)
        elif event["kind"] == "main":
            current = None
        elif current is not None:
            current.append(event)
    return runs


def describe(event: dict) -> str:
    extra = {k: v for k, v in event.items() if k not in ("t", "kind")}
    parts = [f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in extra.items()]
    return " ".join([event["kind"], *parts])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--until", default="first-on-screen", help="stop each timeline here")
    parser.add_argument("--all", action="store_true", help="list layout requests too")
    args = parser.parse_args()
    events = [json.loads(line) for line in args.trace.read_text().splitlines() if line.strip()]
    for number, run in enumerate(replies(events), 1):
        enter = run[0]["t"]
        print(f"-- reply {number}")
        for event in run:
            if event["kind"] in NOISY and not args.all:
                continue
            print(f"{(event['t'] - enter) * 1000:8.1f}  {describe(event)}")
            if event["kind"] == args.until:
                break


if __name__ == "__main__":
    main()
