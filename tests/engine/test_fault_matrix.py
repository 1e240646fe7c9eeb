"""Every fault against every surface (tests/helpers/fault_matrix.py), and docs/faults.md kept
equal to what these tests observe.

Each case asserts what must hold whatever the wording: one line, the text that arrived kept,
the next request working, nothing of an escape sequence on the terminal. Each outcome is kept
in a folder shared by the run's workers; when the whole matrix ran, the run's end renders the
document from them and compares it with docs/faults.md (tests/conftest.py;
`python -m tests.faults_report` rewrites it), so no worker has to run the matrix alone.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.fault_matrix import CASES, SURFACES, FaultCase
from helpers.fault_results import keep
from helpers.fault_server import FaultServer


@pytest.fixture(scope="module")
def fault_server() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


CASE_IDS = [case.fault + ("-trim" if case.trim else "") for case in CASES]
# The app's surface runs the whole app: end to end.
SURFACE_PARAMS = [
    pytest.param(name, marks=[pytest.mark.e2e] if name == "app" else []) for name in SURFACES
]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("surface", SURFACE_PARAMS)
def test_fault(surface: str, case: FaultCase, fault_server: FaultServer) -> None:
    outcome = SURFACES[surface](case, fault_server)
    keep(surface, case.name, outcome)
    assert "\n" not in outcome.message
    assert not outcome.partial_kept.startswith("NO"), outcome
    assert not outcome.next_works.startswith("NO"), outcome
    assert outcome.terminal_inert != "NO", outcome
    ok = outcome.status.split()[0] == "ok"
    assert ok == (outcome.kind == "—"), outcome
    if surface == "ask":
        exit_code = int(outcome.status.rsplit("exit ", 1)[1].rstrip(")"))
        assert exit_code == (0 if ok else 1), outcome
