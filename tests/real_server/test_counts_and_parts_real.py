"""The server's own tokenizer counts the budget, and TTFT's parts add up, against the real
server (llama-cpp-python's: it answers `/extras/tokenize/count`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers.cli import firsttoken
from real_server_support import MODEL, RealServer, config_files

from tui.engine.tokens.counter import get_counter
from tui.sample_conversation import bloated_sample

QUESTION = "And now, in one word?"

# The sample's first rounds: long engineering prose, lists and code, on which this model's
# tokenizer and the cl100k estimate differ. Users' and assistants' messages only: this server's
# `gemma` chat format leaves system and tool messages out of the model's prompt, while its
# tokenizer endpoint counts text, so those would be counted though the model never reads them
# (an over-count: the safe side of a budget; docs/metrics.md says so).
HISTORY = [
    m for m in bloated_sample()[:12] if m["role"] in ("user", "assistant") and m.get("content")
]


def _ask(server: RealServer, folder: Path, *flags: str) -> dict:
    done = firsttoken(
        "ask", "--json", "--base-url", server.base_url, *config_files(folder, max_tokens=8),
        "--messages", str(folder / "chat.json"), *flags, QUESTION,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    payload: dict = json.loads(done.stdout)
    assert payload["status"] == "ok", payload
    return payload


def test_the_servers_count_is_used_and_agrees_with_its_usage(
    llama_server: RealServer, tmp_path: Path
) -> None:
    (tmp_path / "chat.json").write_text(json.dumps(HISTORY))
    # The first request finds the server's tokenizer (probed after the reply); the second, not
    # streamed so that this server reports its usage, counts with it before sending.
    _ask(llama_server, tmp_path)
    counted = _ask(llama_server, tmp_path, "--no-stream")["prompt_tokens"]
    assert counted["source"].startswith("server"), counted  # "server_text": text counts + framing
    assert counted["usage"] is not None
    # This server counts text only, so each message's template framing (a few tokens) is
    # missing: within 1 % of what the model read.
    assert abs(counted["server"] - counted["usage"]) <= counted["usage"] / 100, counted
    # The local estimate (cl100k) is further off on this model than the server's own count.
    question = {"role": "user", "content": QUESTION}
    local = get_counter(MODEL).count_messages([*HISTORY, question])
    assert abs(counted["server"] - counted["usage"]) < abs(local - counted["usage"]), local


def test_ttfts_parts_add_up_to_the_measured_ttft(llama_server: RealServer, tmp_path: Path) -> None:
    (tmp_path / "chat.json").write_text(json.dumps(HISTORY[:2]))
    payload = _ask(llama_server, tmp_path)
    phases = payload["phases_ms"]
    assert phases and "request_sent" in phases, payload
    parts = payload["anatomy"]["parts"]
    assert abs(sum(part["ms"] for part in parts) - payload["ttft_ms"]) < 0.01, payload["anatomy"]
    names = [part["name"] for part in parts]
    assert "request" in names and names[-1].startswith(("network", "server"))


def test_a_count_the_servers_usage_contradicts_is_never_shown_as_exact(
    llama_server: RealServer, tmp_path: Path
) -> None:
    """The whole F6 sample: this server's `gemma` format leaves its system prompt and tool
    results out of the model's prompt, so its tokenizer's count of the texts is far over what
    the model read. Usage wins, and the gap is said: in --json and on the summary line."""
    (tmp_path / "chat.json").write_text(json.dumps(bloated_sample()))
    _ask(llama_server, tmp_path, "--no-trim")  # finds the server's tokenizer after the reply
    payload = _ask(llama_server, tmp_path, "--no-trim", "--no-stream")
    counted = payload["prompt_tokens"]
    assert counted["source"] == "server_text" and counted["usage"] is not None, counted
    assert counted["server"] > counted["usage"] * 1.2, counted  # far over: not the same prompt
    assert counted["agrees"] is False, counted
    done = firsttoken(
        "ask", "--base-url", llama_server.base_url, *config_files(tmp_path, max_tokens=8),
        "--messages", str(tmp_path / "chat.json"), "--no-trim", "--no-stream", QUESTION,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = done.stderr.strip().splitlines()[-1]
    # Usage wins: the line shows this request's own usage, as its record keeps it (this
    # server's usage for the same messages differs by a token or two between requests).
    kept = firsttoken("history", "--json", "--limit", "1")
    assert kept.returncode == 0, kept.stderr
    usage = json.loads(kept.stdout.splitlines()[-1])["prompt_tokens_usage"]
    shown = re.search(r"prompt ([\d,]+) tokens", summary)
    assert shown is not None, summary
    assert int(shown.group(1).replace(",", "")) == usage, (summary, usage)
    assert "its tokenizer counted ≈" in summary, summary
