"""What every command shares: its exit codes, the one-line error, and the `--messages` loader.

Every command reports a problem the same way, `firsttoken: error: <what and the fix>` on
stderr with exit code 2 for bad input, so scripts and people can rely on one shape. A message
may carry server text (an error body) or a URL: it is printed inert (no control character
reaches the terminal) and with any URL's credentials masked.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

EXIT_OK = 0
EXIT_FAILED = 1  # a request failed or ended incomplete; a missed target in `check`
EXIT_USAGE = 2  # bad flags, files or config
EXIT_INTERRUPTED = 130  # Ctrl+C
EXIT_BROKEN_PIPE = 141  # the reader went away (`| head`), as other Unix tools exit

ROLES = ("system", "developer", "user", "assistant", "tool")


class UsageError(Exception):
    """Bad input: one line naming the flag or file and the fix; the command exits 2."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.splitlines()))


def shown(message: str) -> str:
    """A message as it may reach a terminal: one line, inert, any URL's secrets masked."""
    # Imported here: `firsttoken --version` starts without loading the engine.
    from tui.engine.text.inert import inert_line
    from tui.engine.text.redact import redact_text

    return inert_line(redact_text(message))


def error(message: str, stream: TextIO | None = None) -> None:
    print(f"firsttoken: error: {shown(message)}", file=stream or sys.stderr, flush=True)


def warning(message: str, stream: TextIO | None = None) -> None:
    print(f"firsttoken: warning: {shown(message)}", file=stream or sys.stderr, flush=True)


def load_messages(path: Path) -> list[dict[str, Any]]:
    """The OpenAI chat messages in a JSON file (a list, or an object with a "messages" list),
    checked as a server would check them; UsageError names the file, the message and the fix."""
    where = f"--messages {path}"
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{where}: is a folder, not a JSON file") from None
    except OSError as problem:
        raise UsageError(f"{where}: cannot read it ({problem.strerror})") from None
    except UnicodeDecodeError as problem:
        raise UsageError(
            f"{where}: not UTF-8 text (byte {problem.start}); save it as UTF-8"
        ) from None
    except json.JSONDecodeError as problem:
        raise UsageError(
            f"{where}:{problem.lineno}:{problem.colno}: not valid JSON ({problem.msg})"
        ) from None
    except RecursionError:
        raise UsageError(f"{where}: JSON nested too deeply to be a chat") from None
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not isinstance(data, list):
        raise UsageError(
            f"{where}: expected a JSON list of chat messages "
            f'([{{"role": "user", "content": "..."}}]), got a JSON {_json_type(data)}'
        )
    for index, message in enumerate(data):
        wrong = _message_problem(message)
        if wrong is not None:
            raise UsageError(f"{where}: message [{index}] {wrong}")
    return data


def _message_problem(message: object) -> str | None:
    """What a server would refuse in one message, or None."""
    if not isinstance(message, dict):
        return f"is a JSON {_json_type(message)}, not an object with a role and content"
    role = message.get("role")
    if role not in ROLES:
        return f"has role {_shown(role)}: expected one of {', '.join(ROLES)}"
    content = message.get("content")
    tool_calls = message.get("tool_calls")
    if tool_calls is not None and (role != "assistant" or not isinstance(tool_calls, list)):
        return "has tool_calls: only an assistant message carries them, as a list"
    if content is None:
        if role == "assistant" and tool_calls:
            return None
        return 'has no "content" (a string)'
    if isinstance(content, str):
        return _text_problem(content)
    if isinstance(content, list):
        for part in content:
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                return 'has a content list whose items are not parts ({"type": "text", ...})'
            text = part.get("text")
            if isinstance(text, str) and (problem := _text_problem(text)):
                return problem
        return None
    return f"has content of type {_json_type(content)}: expected a string"


def _text_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as problem:
        code = ord(text[problem.start])
        return f"holds an unpaired surrogate \\u{code:04x}, which is not text: fix the escape"
    return None


def _json_type(value: object) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _shown(value: object) -> str:
    shown = json.dumps(value, ensure_ascii=True)
    return shown if len(shown) <= 40 else shown[:39] + "…"


class OneJsonObject:
    """`--json`'s promise: exactly one object on stdout, whatever failed. Made once per run
    (tui/cli.py) and handed to the command, so the last line of defence knows whether the
    command printed it already."""

    def __init__(self, wanted: bool) -> None:
        self.wanted = wanted
        self.printed = False

    def print(self, payload: dict[str, Any]) -> None:
        """The object, unless one is out already (or --json was not asked for)."""
        if not self.wanted or self.printed:
            return
        from tui.engine.text.inert import json_text

        self.printed = True
        sys.stdout.write(json_text(payload) + "\n")
        sys.stdout.flush()
