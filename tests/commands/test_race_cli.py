"""`firsttoken race` through the real command against the demo endpoint: the verdict for
targets of known simulated speeds, the A B B A order and cold rounds in the demo's own request
log, together and warm rounds, the exit codes, and the race kept in the history."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import firsttoken

from tui.demo import DemoThread, start_demo_in_thread
from tui.demo.latency_model import latency_model
from tui.engine.store.database import Store

pytestmark = pytest.mark.e2e

FAST, SLOW = "demo-h100-70b", "demo-cpu-small"  # 0.08 and 1.2 ms a prompt token
# ~250 prompt tokens: some 20 ms against some 300 ms to the first token, far apart on any
# machine; three reply tokens keep each request short.
PROMPT = "Reply 3 tokens. " + " ".join(f"word{i}" for i in range(240))


@pytest.fixture
def demo() -> Iterator[DemoThread]:
    thread = start_demo_in_thread(latency_model("instant"))
    try:
        yield thread
    finally:
        thread.stop()


def _race(demo: DemoThread, *args: str) -> tuple[int, str, str]:
    done = firsttoken("race", *args, "--prompt", PROMPT, "--base-url", demo.base_url)
    return done.returncode, done.stdout, done.stderr


def _tag(request: dict) -> str | None:
    first = next(m for m in request["messages"] if m["role"] == "user")
    found = re.match(r"\[(run [0-9a-f]+)\]", first["content"])
    return found.group(1) if found else None


def test_the_faster_target_wins_in_turns_every_request_cold(demo: DemoThread) -> None:
    code, out, err = _race(demo, FAST, SLOW, "--rounds", "5", "--json")
    assert code == 0, err
    payload = json.loads(out)
    verdict = payload["verdict"]
    assert verdict["faster"] == FAST and verdict["decided"] and verdict["runner_up"] == SLOW
    assert verdict["difference_ms"] > 100 and verdict["ratio"] > 3
    assert verdict["p_value"] < 0.05 and "Mann-Whitney" in verdict["method"]
    low, high = verdict["interval_ms"]
    assert 0 < low <= verdict["difference_ms"] <= high
    fast, slow = payload["targets"]
    assert (fast["label"], fast["model"], fast["runs"], fast["ok"]) == (FAST, FAST, 5, 5)
    assert set(fast["ttft_ms"]) == {"p50", "p90", "min", "max"}
    assert fast["ttft_ms"]["max"] < slow["ttft_ms"]["min"]
    for name in ("time_to_first_answer_ms", "total_ms", "tpot_ms", "output_tokens_per_s"):
        assert set(fast[name]) == {"p50", "p90", "min", "max"}
    # The demo's own log: one at a time, the order reversed every round, each request cold.
    models = [r["model"] for r in demo.requests]
    assert models == [FAST, SLOW, SLOW, FAST, FAST, SLOW, SLOW, FAST, FAST, SLOW]
    tags = [_tag(r) for r in demo.requests]
    assert None not in tags and len(set(tags)) == len(tags)


def test_warm_rounds_send_the_same_prompt(demo: DemoThread) -> None:
    code, _, err = _race(demo, FAST, SLOW, "--rounds", "2", "--warm")
    assert code == 0, err
    prompts = {json.dumps(r["messages"]) for r in demo.requests}
    assert len(prompts) == 1 and _tag(demo.requests[0]) is None


def test_together_sends_a_rounds_requests_at_once(demo: DemoThread) -> None:
    code, out, err = _race(demo, FAST, SLOW, "--rounds", "3", "--together", "--json")
    assert code == 0, err
    assert json.loads(out)["together"] is True
    requests = demo.requests
    assert len(requests) == 6
    for first, second in zip(requests[::2], requests[1::2], strict=True):
        # Both were received before either had its first token: sent at once.
        assert max(first["received_at"], second["received_at"]) < min(
            first["first_token_at"], second["first_token_at"]
        )


def test_the_table_and_the_verdict_for_people(demo: DemoThread) -> None:
    code, out, err = _race(demo, f"{FAST},trim=off", SLOW, "--rounds", "4")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["target", "model", "endpoint", "TTFT"]
    assert any(line.startswith(f"{FAST},trim=off ") for line in lines)
    verdict = next(line for line in lines if line.startswith("verdict: "))
    assert f"{FAST},trim=off reaches its first token sooner than {SLOW}: by" in verdict
    assert "note: 4 rounds, one at a time (A B, B A, …)" in lines


def test_expect_faster_makes_the_exit_code_the_verdict(demo: DemoThread) -> None:
    code, _, err = _race(demo, FAST, SLOW, "--rounds", "4", "--expect-faster", SLOW)
    assert code == 1 and f"race: {SLOW!r} did not win" in err
    code, _, err = _race(demo, FAST, SLOW, "--rounds", "4", "--expect-faster", FAST)
    assert code == 0, err


def test_too_few_rounds_are_too_close_to_call(demo: DemoThread) -> None:
    code, out, _ = _race(demo, FAST, SLOW, "--rounds", "2", "--json")
    verdict = json.loads(out)["verdict"]
    assert code == 0 and verdict["faster"] is None and verdict["leader"] == FAST
    assert verdict["summary"].startswith("too close to call: 4 rounds a target are needed")


@pytest.mark.parametrize(
    ("targets", "said"),
    [
        ([FAST], "race: name at least two targets"),
        ([FAST, FAST], f"race: {FAST!r} is named twice"),
        ([FAST, f"{SLOW},speed=max"], "unknown setting 'speed=max'"),
        ([FAST, f"{SLOW}@ftp://x"], "is not a base URL"),
        ([FAST, f"{SLOW},budget=lots"], "budget='lots' is not a token count"),
    ],
)
def test_bad_targets_are_one_line_and_exit_2(
    demo: DemoThread, targets: list[str], said: str
) -> None:
    code, out, err = _race(demo, *targets)
    assert code == 2 and out == "" and said in err and len(err.splitlines()) == 1
    assert demo.requests == []


def test_the_race_is_one_chat_with_a_lane_per_target(demo: DemoThread, isolated_home: Path) -> None:
    code, out, err = _race(demo, FAST, f"{FAST},stream=off", "--rounds", "2", "--json")
    assert code == 0, err
    payload = json.loads(out)
    with Store(read_only=True) as store:
        (chat,) = store.chats()
        assert chat["kind"] == "race"
        assert store.lanes(chat["id"]) == [FAST, f"{FAST},stream=off"]
        for lane in (0, 1):
            roles = [m["role"] for m in store.messages(chat["id"], lane)]
            assert roles == ["user", "assistant", "assistant"]  # every reply to the prompt
        records = store.records(limit=-1)
    assert {r["race_id"] for r in records} == {payload["race_id"]}
    assert sorted(r["race_target"] for r in records) == sorted(
        [FAST, FAST, *[f"{FAST},stream=off"] * 2]
    )
    assert {r["chat_id"] for r in records} == {chat["id"]}
    listed = firsttoken("history").stdout
    assert "race target" in listed.splitlines()[0] and f"{FAST},stream=off" in listed
