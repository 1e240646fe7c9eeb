"""The exact reply an app received, and the on-screen markers derived from it.

The demo reply is deterministic but mentions what the endpoint received (message count,
prompt tokens), so its cut point differs per app. Rather than re-implementing the server's
reply builder, the harness re-sends the logged request once the measured run is over and
reads the stream: same messages, same max_tokens, same streaming mode, same reply.
"""

from __future__ import annotations

import json
import re
import urllib.request

_WORD = re.compile(r"[A-Za-z0-9_]+")

# The reply opens with "## firsttoken demo reply": "##" is invisible once rendered as a
# heading, so the first *visible* token is " firsttoken", token index 1.
FIRST_VISIBLE_WORD = "firsttoken"
FIRST_VISIBLE_TOKEN_INDEX = 1


def replay(base_url: str, entry: dict, timeout_s: float = 300.0) -> str:
    """The content of the reply to the logged request `entry`, fetched again."""
    body: dict = {
        "model": entry.get("model") or "demo",
        "messages": entry["messages"],
        "stream": bool(entry.get("stream", True)),
    }
    if entry.get("max_tokens") is not None:
        body["max_tokens"] = entry["max_tokens"]
    if entry.get("include_usage"):
        body["stream_options"] = {"include_usage": True}
    request = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer x"},
    )
    parts: list[str] = []
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        if not body["stream"]:
            return json.load(response)["choices"][0]["message"]["content"]
        for raw in response:
            line = raw.decode().strip()
            if not line.startswith("data:") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[5:])
            for choice in chunk.get("choices") or ():
                parts.append((choice.get("delta") or {}).get("content") or "")
    return "".join(parts)


def final_marker(reply: str, max_words: int = 3) -> tuple[str, str]:
    """(phrase, last word): the reply's last words within its last Markdown block.

    Words only, so Markdown punctuation (`**`, list dashes) that renders differently or not
    at all never breaks the match; the phrase stays inside one block, because a block
    boundary puts bullets or blank lines between words on screen.
    """
    last_block = re.split(r"\n\s*\n|\n\s*[-*] |\n", reply.rstrip())[-1]
    words = _WORD.findall(last_block) or _WORD.findall(reply)
    tail = words[-max_words:]
    return " ".join(tail), tail[-1]
