"""The check both secrets tests end with: a key, in any of its forms, in nothing firsttoken
wrote to the terminal and in no file it kept."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def assert_key_nowhere(forms: set[bytes], written: Iterable[bytes], home: Path) -> None:
    for output in written:
        assert not any(form in output for form in forms)
    files = [path for path in home.rglob("*") if path.is_file()]
    assert any(path.name == "history.sqlite3" for path in files)
    for path in files:
        data = path.read_bytes()
        assert not any(form in data for form in forms), path
