"""CPU time of a process tree from /proc, and the demo endpoint's per-request timestamps.

/proc/<pid>/stat fields 14-17 are utime, stime, cutime, cstime in clock ticks; cutime/cstime
only cover children already waited for, so live descendants are summed explicitly.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces; everything after its ')' is fixed-width.
    return raw[raw.rindex(")") + 2 :].split()


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields:
                tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def tree_cpu_seconds(root: int) -> float:
    """user+sys CPU of `root` and all its live descendants, plus their reaped children."""
    tree = _children()
    total_ticks = 0
    stack = [root]
    while stack:
        pid = stack.pop()
        fields = _stat(pid)
        if fields is None:
            continue
        # After ')' : state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
        total_ticks += sum(int(fields[i]) for i in (11, 12, 13, 14))
        stack.extend(tree.get(pid, ()))
    return total_ticks / _TICK


def read_request_log(path: Path, wait_s: float = 3.0, count: int = 1) -> list[dict]:
    """The demo endpoint's JSONL log; waits briefly, as an entry is written when a request ends."""
    deadline = time.monotonic() + wait_s
    while True:
        entries: list[dict] = []
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    entries.append(json.loads(line))
        if len(entries) >= count or time.monotonic() > deadline:
            return entries
        time.sleep(0.05)


class CpuSampler:
    """Samples a process tree's CPU every `period_s` on a thread, so the CPU spent up to any
    moment of the run (e.g. when the request reached the endpoint) can be read afterwards."""

    def __init__(self, pid: int, period_s: float = 0.02) -> None:
        self.pid = pid
        self.period_s = period_s
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.perf_counter(), tree_cpu_seconds(self.pid)))
            self._stop.wait(self.period_s)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def at(self, moment: float) -> float | None:
        """CPU seconds at the last sample taken at or before `moment`."""
        before = [cpu for at, cpu in self.samples if at <= moment]
        return before[-1] if before else None
