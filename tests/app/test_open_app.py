"""`firsttoken --messages FILE.json`: the file is checked before the app opens."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tui.commands.open_app import MessagesFileError, load_messages, run
from tui.config import ConfigFlags, load_config


def test_loads_a_message_list_and_a_messages_object(tmp_path: Path):
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ]
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(messages))
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"messages": messages}))
    assert load_messages(plain) == messages
    assert load_messages(wrapped) == messages


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "not valid JSON"),
        ('{"a": 1}', "expected a JSON list"),
        ('[{"role": "robot", "content": "x"}]', "role 'robot'"),
        ('["hello"]', "message [0] is not an object"),
        ('[{"role": "user", "content": 5}]', "content must be"),
    ],
)
def test_bad_files_give_one_line_naming_the_file(tmp_path: Path, text: str, expected: str):
    path = tmp_path / "chat.json"
    path.write_text(text)
    with pytest.raises(MessagesFileError) as caught:
        load_messages(path)
    message = str(caught.value)
    assert str(path) in message and expected in message and "\n" not in message


def test_run_exits_2_with_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    config = load_config(ConfigFlags(), env={})
    args = argparse.Namespace(messages=tmp_path / "missing.json")
    assert run(args, config) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("firsttoken: error: ") and "missing.json" in err
    assert len(err.splitlines()) == 1
