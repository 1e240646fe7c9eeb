"""Start a demo endpoint in another process and read its base URL from its first line.

Shared by the client benchmarks: the server must not share the measured process's CPU or GIL.
"""

from __future__ import annotations

import re
import subprocess

_URL = re.compile(r"(http://127\.0\.0\.1:\d+/v1)")


def base_url_of(process: subprocess.Popen[str]) -> str:
    """The URL the server printed first; stops the process and exits if it printed none."""
    assert process.stdout is not None
    line = process.stdout.readline()
    match = _URL.search(line)
    if not match:
        process.kill()
        details = process.stderr.read() if process.stderr is not None else ""
        raise SystemExit(f"demo server did not start: {line!r} {details!r}")
    return match.group(1)
