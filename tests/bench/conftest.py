"""The `bench` marker: cheap render-cost guards that run by default (`-m "not bench"` skips)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "bench: cheap CPU-ratio regression guards (deselect with -m 'not bench')"
    )
