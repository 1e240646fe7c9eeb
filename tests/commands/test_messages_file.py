"""The one `--messages` loader: what `ask`, `bench` and the app accept, and the one-line error
(exit 2, naming the file, the message and the fix) for everything else."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tui.commands import ask, bench, open_app
from tui.commands._common import UsageError, load_messages
from tui.config import Config

TOOL_TURN = [
    {"role": "user", "content": "weather?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "1", "content": "sunny"},
]


def _file(tmp_path: Path, data: bytes | str) -> Path:
    path = tmp_path / "chat.json"
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def test_a_list_and_an_object_with_messages_load_alike(tmp_path: Path) -> None:
    plain = _file(tmp_path, json.dumps(TOOL_TURN))
    assert load_messages(plain) == TOOL_TURN
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"messages": TOOL_TURN}))
    assert load_messages(wrapped) == TOOL_TURN


def test_content_parts_are_messages_too(tmp_path: Path) -> None:
    parts = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert load_messages(_file(tmp_path, json.dumps(parts))) == parts


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("{not json", ":1:2: not valid JSON"),
        ('{"a": 1}', "expected a JSON list of chat messages"),
        ('["hello"]', "message [0] is a JSON string, not an object"),
        ('[{"role": "wizard", "content": "x"}]', 'message [0] has role "wizard"'),
        ('[{"content": "x"}]', "message [0] has role null"),
        ('[{"role": "user", "content": 5}]', "content of type number"),
        ('[{"role": "user", "content": {"a": 1}}]', "content of type object"),
        ('[{"role": "user"}]', 'has no "content"'),
        ('[{"role": "user", "content": "x", "tool_calls": []}]', "only an assistant"),
        ('[{"role": "user", "content": [1]}]', "items are not parts"),
        ('[{"role": "user", "content": "\\ud800"}]', "unpaired surrogate \\ud800"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (b'[{"role": "user", "content": "\xff"}]', "not UTF-8 text (byte 30)"),
    ],
)
def test_bad_files_are_one_line_naming_the_file(
    tmp_path: Path, data: str | bytes, expected: str
) -> None:
    path = _file(tmp_path, data)
    with pytest.raises(UsageError) as caught:
        load_messages(path)
    message = str(caught.value)
    assert message.startswith(f"--messages {path}") and expected in message
    assert "\n" not in message


def test_a_missing_file_and_a_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        load_messages(tmp_path / "missing.json")
    with pytest.raises(UsageError, match="is a folder"):
        load_messages(tmp_path)


def _namespace(path: Path) -> argparse.Namespace:
    return argparse.Namespace(
        prompt=None, messages=path, stream=None, trim=None, budget=None, json=False, runs=1,
        resume=None,
    )  # fmt: skip


@pytest.mark.parametrize("command", ["ask", "bench", "app"])
def test_every_command_refuses_the_same_file_the_same_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = _file(tmp_path, '[{"role": "wizard", "content": "x"}]')
    run = {"ask": ask.run, "bench": bench.run_bench, "app": open_app.run}[command]
    code = run(_namespace(path), Config(demo_preset="instant"))
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f'firsttoken: error: --messages {path}: message [0] has role "wizard": ' + (
        "expected one of system, developer, user, assistant, tool\n"
    )
