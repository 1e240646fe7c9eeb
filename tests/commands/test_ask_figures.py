"""What `ask` adds about a request: TTFT's parts, the cache, reasoning, pauses, buffering and
the request class, in its summary, its --json object and the stored record (real HTTP to the
demo endpoint playing each server)."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest
from helpers.cli import ask_args
from helpers.client import TEST_KEY, demo, fault_url

from tui.commands import ask
from tui.config import Config
from tui.engine.store.database import Store
from tui.session.intake import ReplyIntake

NEW_JSON_KEYS = {
    "request_class_reason", "time_to_first_answer_ms", "reasoning", "reasoning_tokens",
    "server", "anatomy", "pauses", "longest_gap_ms", "buffered",
    "notices", "prompt_progress", "prefill_tokens_per_s", "draft_acceptance",
    "kv_cache", "kv_cache_bytes",
}  # fmt: skip
THINKING_MODEL = "firsttoken-demo-reasoning"


def _args(prompt: str, **changes: object) -> argparse.Namespace:
    return ask_args(prompt, **changes)


def _config(base_url: str, **changes: object) -> Config:
    values: dict[str, object] = {"base_url": base_url, "api_key": TEST_KEY, "max_retries": 0}
    values.update(changes)
    return Config(**values)  # type: ignore[arg-type]


def _run(capsys: Any, args: argparse.Namespace, config: Config) -> tuple[int, str, str]:
    code = ask.run(args, config)
    out, err = capsys.readouterr()
    return code, out, err


def test_llamacpp_summary_splits_ttft_and_shows_the_cache(capsys) -> None:
    with demo("instant", server="llamacpp", prefill_ms_per_token=0.2, prefix_cache=True) as s:
        prompt = "cache " * 150 + "reply 4 tokens"
        _run(capsys, _args(prompt), _config(s.base_url))
        code, out, err = _run(capsys, _args(prompt, json=True), _config(s.base_url))
        entry = s.requests[-1]
    payload = json.loads(out)
    assert code == 0 and payload.keys() >= NEW_JSON_KEYS
    assert payload["server"]["cached_tokens"] == entry["cached_prompt_tokens"] > 0
    assert payload["prompt_tokens"]["cached"] == entry["cached_prompt_tokens"]
    parts = {part["name"]: part["ms"] for part in payload["anatomy"]["parts"]}
    assert parts["prefill"] == pytest.approx(entry["prefill_ms"], abs=1e-3)
    assert sum(parts.values()) == pytest.approx(payload["ttft_ms"], abs=1e-6)
    assert payload["request_class"] == "short_qa"
    assert payload["request_class_reason"] == "a short prompt, no length asked"
    with Store() as store:
        (row,) = [r for r in store.records() if r["id"] == payload["id"]]
    assert row["server"] == payload["server"]  # kept in the record, so in history --json

    with demo("instant", server="llamacpp", prefill_ms_per_token=0.2, prefix_cache=True) as s:
        _run(capsys, _args(prompt), _config(s.base_url))
        code, _, err = _run(capsys, _args(prompt), _config(s.base_url))
        entry = s.requests[-1]
    (summary,) = err.strip().splitlines()
    prompt_tokens = entry["prompt_tokens"]
    cached = entry["cached_prompt_tokens"]
    assert f"cached {cached:,} of {prompt_tokens:,} prompt tokens" in summary
    assert " · prefill " in summary and " · network + queue " in summary and "TTFT " in summary
    assert "short_qa ≤500 ms met (a short prompt, no length asked)" in summary


def test_reasoning_goes_to_stderr_dims_on_a_terminal_and_is_kept(capsys) -> None:
    with demo("instant", decode_tokens_per_s=400.0) as s:
        # The server holds the reply 300 ms after its sixth token (mid-thinking), so the answer
        # comes after the thinking however the client's reads happen to be scheduled.
        config = _config(fault_url(s, "pause-300x1"), model=THINKING_MODEL)
        code, out, err = _run(capsys, _args("think 8 tokens, reply 5 tokens"), config)
        assert code == 0 and out.strip()
        thinking, summary = err.strip().splitlines()
        assert thinking and thinking not in out  # the thinking is not the reply
        assert "8 thinking" in summary and "answer " in summary
        code, out, err = _run(capsys, _args("think 8 tokens", no_reasoning=True), config)
        assert len(err.strip().splitlines()) == 1  # the summary only
        code, out, _ = _run(capsys, _args("think 8 tokens, reply 5 tokens", json=True), config)
    payload = json.loads(out)
    assert payload["reasoning"].strip() == thinking.strip()  # the same deterministic thinking
    assert payload["reasoning_tokens"] == 8
    assert payload["time_to_first_answer_ms"] > payload["ttft_ms"]
    with Store() as store:
        (row,) = [r for r in store.records() if r["id"] == payload["id"]]
        reply = store.messages(payload["chat_id"])[-1]
    assert row["reasoning_text"] == payload["reasoning"]
    assert reply == {
        "role": "assistant",
        "content": payload["reply"],
        "reasoning_content": payload["reasoning"],
    }


def test_reasoning_on_a_terminal_is_dimmed_and_inert(monkeypatch) -> None:
    import io

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    thinking = ask._Reasoning(terminal, shown=True)
    sink = ask._Terminal(ask._Stopped(), thinking, shown=True)
    intake = ReplyIntake(sink.text, sink.reasoning)  # the turn's way in
    intake.feed_reasoning("weighing \x1b]52;c;evil\x07 options")
    intake.end_reasoning()
    sink.answer_started()
    written = terminal.getvalue()
    assert written.startswith("\x1b[2m") and written.endswith("\x1b[0m\n")
    assert "\x1b]" not in written and "␛]52;c;evil␇" in written


def test_an_explicit_max_tokens_decides_the_class(capsys) -> None:
    with demo("instant") as s:
        args = _args("What is the capital of France?", json=True, max_tokens=1500)
        code, out, _ = _run(capsys, args, _config(s.base_url))
        payload = json.loads(out)
        assert code == 0 and payload["request_class"] == "long_generation"
        assert s.requests[-1]["max_tokens"] == 1500
        too_many = _args("Hi", max_tokens=5000)
        code, _, err = _run(capsys, too_many, _config(s.base_url))
    assert code == 2 and "--max-tokens 5,000 exceeds the output reserve" in err


def test_a_buffered_stream_is_said_with_the_fix(capsys) -> None:
    with demo("instant", decode_tokens_per_s=150.0) as s:
        code, _, err = _run(capsys, _args("reply 24 tokens"), _config(fault_url(s, "buffered")))
    summary, warning = err.strip().splitlines()
    assert code == 0 and " · buffered" in summary
    assert warning.startswith("firsttoken: warning: streaming is on, but the reply arrived all")
    assert "proxy_buffering off" in warning


def test_pauses_are_counted_in_the_summary(capsys) -> None:
    with demo("instant", decode_tokens_per_s=200.0) as s:
        config = _config(fault_url(s, "pause-400x2"), chunk_timeout_ms=100)
        code, _, err = _run(capsys, _args("reply 12 tokens"), config)
    assert code == 0 and "2 pauses, longest " in err


def test_the_servers_tokenizer_counts_the_prompt_and_then_trims_it(capsys, tmp_path) -> None:
    history = [{"role": "system", "content": "You answer briefly."}]
    for n in range(12):
        history.append({"role": "user", "content": f"{n}: " + "why is prefill slow? " * 30 + "?"})
        history.append({"role": "assistant", "content": "Because it is long. " * 30 + "."})
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(history))
    args = _args("and now? reply 3 tokens", json=True, messages=str(path), budget=2000)
    with demo("instant", server="llamacpp") as s:
        # The first run trims with the local estimate, then probes the server's tokenizer and
        # counts the prompt it sent with it.
        _, out, _ = _run(capsys, args, _config(s.base_url))
        first = json.loads(out)
        # The next run knows the tokenizer: the conversation might exceed the budget, so the
        # trimmer decides with the server's counts before sending.
        _, out, _ = _run(capsys, args, _config(s.base_url))
        second = json.loads(out)
    for payload in (first, second):
        counted = payload["prompt_tokens"]
        assert counted["server"] == counted["usage"] and counted["source"] == "server"
    # The local estimate trimmed more than the budget needed; the server's counts keep all
    # that fits (what is left is less than one more message, ~160 tokens).
    assert first["prompt_tokens"]["server"] < second["prompt_tokens"]["server"]
    assert 2000 - 170 < second["prompt_tokens"]["server"] <= 2000 + 6
    assert abs(second["trim"]["tokens_after"] - second["prompt_tokens"]["server"]) <= 6
