"""How far local prompt-token estimates are from what the server reports.

A local count is approximate for most models (another tokenizer, a chat template the client
cannot see), but the error is steady for one model, so a ratio learnt from `usage.prompt_tokens`
(streamed or not) corrects later estimates well. An exponential moving average follows a change
of template or server without being thrown by one odd reply. The ratio is kept per model
across runs in the state dir (`calibration.json`, `CalibrationFile`), so a server that sends no
`usage` in a stream still benefits from one non-streamed reply, in this run or a later one.
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import Any

# Weight of the newest sample; ~5 replies to mostly forget an old server.
ALPHA = 0.3
# A ratio outside this range means a bad sample (an image, a cached prompt), not a tokenizer.
MIN_RATIO = 0.2
MAX_RATIO = 5.0


class CalibrationFile:
    """Every model's ratio in one small JSON file in the state dir (the owner's alone); a file
    that cannot be read or written is ignored (calibration then lasts the run)."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from tui.locations import calibration_path

            path = calibration_path()
        self.path = path
        self._lock = threading.Lock()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def load(self, model: str) -> tuple[float, int] | None:
        found = self._read().get(model)
        if not isinstance(found, dict):
            return None
        ratio, samples = found.get("ratio"), found.get("samples")
        if not isinstance(ratio, int | float) or not isinstance(samples, int):
            return None
        if not MIN_RATIO <= ratio <= MAX_RATIO or samples < 1:
            return None
        return float(ratio), samples

    def save(self, model: str, ratio: float, samples: int) -> None:
        from tui.locations import write_atomically

        with self._lock:
            data = self._read()
            data[model] = {"ratio": ratio, "samples": samples}
            with contextlib.suppress(OSError):  # a convenience across runs, not a record
                write_atomically(self.path, json.dumps(data, indent=1, sort_keys=True))


class Calibration:
    """Running actual/estimated ratio for one model. Thread-safe. With a `model` and a `file`
    it starts from the ratio saved in an earlier run (read on first use) and saves each new
    sample; without them it lives in memory only."""

    def __init__(self, model: str | None = None, file: CalibrationFile | None = None) -> None:
        self._lock = threading.Lock()
        self._ratio = 1.0
        self._samples = 0
        self._model = model
        self._file = file
        self._loaded = file is None or model is None

    def _load(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            assert self._file is not None and self._model is not None
            found = self._file.load(self._model)
            if found is not None and self._samples == 0:
                self._ratio, self._samples = found

    @property
    def ratio(self) -> float:
        self._load()
        return self._ratio

    @property
    def samples(self) -> int:
        self._load()
        return self._samples

    def record(self, estimated: int, actual: int) -> None:
        """Learn from one reply; non-positive or absurd pairs are ignored."""
        if estimated <= 0 or actual <= 0:
            return
        sample = actual / estimated
        if not MIN_RATIO <= sample <= MAX_RATIO:
            return
        self._load()
        with self._lock:
            if self._samples == 0:
                self._ratio = sample
            else:
                self._ratio = ALPHA * sample + (1 - ALPHA) * self._ratio
            self._samples += 1
            ratio, samples = self._ratio, self._samples
        if self._file is not None and self._model is not None:
            self._file.save(self._model, ratio, samples)

    def apply(self, n: int) -> int:
        """A local estimate corrected by the learnt ratio (unchanged before any sample)."""
        self._load()
        if self._samples == 0:
            return n
        return max(0, round(n * self._ratio))

    def reset(self) -> None:
        """Forget the ratio, in memory (a saved one is not read again)."""
        with self._lock:
            self._loaded = True
            self._ratio = 1.0
            self._samples = 0
