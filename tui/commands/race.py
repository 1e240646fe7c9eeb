"""`firsttoken race TARGET TARGET [TARGET…]`: the same prompt to each target, round by round,
and which reaches its first token sooner (tui/engine/race.py, tui/session/race.py).

Exit codes: 0 the race ran (with `--expect-faster LABEL`: and LABEL won, decided), 1 a target
got no reply at all or the expected target did not win, 2 usage or config error (one line
naming the target, flag or file), 130 interrupted (what finished is printed and kept).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.commands._common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    error,
    load_messages,
    warning,
)
from tui.engine.text.inert import inert_line, json_text

if TYPE_CHECKING:
    from tui.config import Config, ConfigFlags
    from tui.engine.chat.events import Finished
    from tui.race_targets import RaceTarget
    from tui.session.chat_state import ChatState
    from tui.session.history import ChatHistory
    from tui.session.race import Lane, Race
    from tui.session.race_lanes import Endpoints

DEFAULT_ROUNDS = 5
DEFAULT_PROMPT = "In two sentences, why does a shorter prompt reach its first token sooner?"


def _messages(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The race's conversation: --messages FILE, then --prompt TEXT after it (or the default
    question). stdin is never read: a script's open stdin must not stall a benchmark."""
    messages: list[dict[str, Any]] = []
    if args.messages is not None:
        messages = load_messages(Path(args.messages))
    if args.prompt is not None:
        if not args.prompt.strip():
            raise UsageError("race: --prompt is empty; give the question to race on")
        messages.append({"role": "user", "content": args.prompt})
    if not messages:
        messages.append({"role": "user", "content": DEFAULT_PROMPT})
    return messages


def _lane(
    target: RaceTarget,
    config: Config,
    endpoints: Endpoints,
    messages: list[dict[str, Any]],
    history: Callable[[ChatState], ChatHistory],
    *,
    cold: bool,
    budget: int | None,
) -> Lane:
    from tui.session.race_lanes import lane_for, state_for

    state = state_for(config, messages, cold=cold)
    if budget is not None and target.budget is None:
        state.budget = budget
        if target.trim is None:
            state.trim_enabled = True  # --budget alone means "trim to it", as for ask
    return lane_for(target, config, endpoints.open(config), state, history)


class _Once:
    """A history that cannot be written: said once for the whole race."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.said = False

    def __call__(self, message: str) -> None:
        if not self.said:
            self.said = True
            self.say(message)


def _progress(lane: Lane, finished: Finished, rounds: int, race: Race) -> None:
    if not sys.stderr.isatty():
        return
    record = finished.record
    ttft = f"{record.ttft_ms:,.0f} ms" if record.ttft_ms is not None else "—"
    state = "" if record.status.value == "ok" else f" ({record.error_kind or record.status.value})"
    print(
        f"  round {race.rounds}/{rounds} · {inert_line(lane.label)}: TTFT {ttft}{state}",
        file=sys.stderr,
        flush=True,
    )


@contextmanager
def _store(config: Config) -> Iterator[Any]:
    if not config.log_every_request:
        yield None
        return
    from tui.engine.store.database import Store, StoreError

    try:
        store = Store()
    except StoreError as problem:
        warning(f"records not saved: {problem}")
        yield None
        return
    with contextlib.closing(store):
        yield store


def run(args: argparse.Namespace, flags: ConfigFlags) -> int:
    from tui.config import ConfigError, load_config
    from tui.engine.race import race_verdict
    from tui.race_targets import TargetError, parse_targets, target_config
    from tui.session.history import ChatHistory
    from tui.session.race import Race
    from tui.session.race_lanes import Endpoints

    as_json = bool(args.json)
    try:
        targets = parse_targets(args.targets)
        messages = _messages(args)
        base = load_config(flags)
        configs = [target_config(target, base, flags) for target in targets]
    except (TargetError, UsageError, ConfigError) as problem:
        error(str(problem))
        return EXIT_USAGE
    expected = args.expect_faster
    if expected is not None and expected not in [t.label for t in targets]:
        error(f"race: --expect-faster {expected!r} is not one of the targets")
        return EXIT_USAGE
    for config in configs:
        for found in config.warnings:
            warning(found)
    cold = not args.warm

    with ExitStack() as stack:
        store = stack.enter_context(_store(configs[0]))
        endpoints = Endpoints(stack, notice=lambda line: print(line, file=sys.stderr, flush=True))
        not_saved = _Once(warning)

        def history(state: ChatState) -> ChatHistory:
            return ChatHistory(store, state, warn=not_saved)

        try:
            lanes = [
                _lane(t, c, endpoints, messages, history, cold=cold, budget=args.budget)
                for t, c in zip(targets, configs, strict=True)
            ]
        except (OSError, ValueError, RuntimeError) as problem:
            error(f"race: cannot open an endpoint: {problem}")
            return EXIT_USAGE
        race = Race(lanes, together=args.together)
        stopped = asyncio.run(_run(race, args.rounds))
    results = [lane.result for lane in race.lanes]
    verdict = race_verdict(results)
    simulated = any(lane.result_simulated for lane in race.lanes)
    if as_json:
        from tui.commands.race_output import race_payload

        payload = race_payload(
            results,
            verdict,
            race_id=race.race_id,
            rounds=race.rounds,
            together=race.together,
            cold=cold,
            simulated=simulated,
            stopped=stopped,
        )
        print(json_text(payload))
    else:
        from tui.commands.race_output import race_lines

        lines = race_lines(
            results,
            verdict,
            rounds=race.rounds,
            together=race.together,
            cold=cold,
            simulated=simulated,
        )
        print("\n".join(lines))
    if stopped:
        error("interrupted: the rounds that finished are above; every request's record was kept")
        return EXIT_INTERRUPTED
    if any(not r.ok for r in results):
        error("race: a target got no reply at all: its errors are in the table")
        return EXIT_FAILED
    if expected is not None and verdict.faster != expected:
        error(f"race: {expected!r} did not win: {verdict.summary}")
        return EXIT_FAILED
    return EXIT_OK


async def _run(race: Race, rounds: int) -> bool:
    """The rounds; True when Ctrl-C stopped them (the round under way is cancelled the
    engine's way, its records kept)."""
    from tui.session.race import run_headless
    from tui.session.turn import QuietSink

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, stop.set)

    async def run_lane(lane: Lane) -> Finished | None:
        if stop.is_set():
            return None
        finished = await run_headless(lane, QuietSink(), stop)
        _progress(lane, finished, rounds, race)
        return finished

    try:
        for _ in range(rounds):
            if stop.is_set():
                break
            await race.round(run_lane, stopped=stop.is_set)
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
        for lane in race.lanes:
            await lane.chat.engine.close()
            lane.chat.history.close()
    return stop.is_set()
