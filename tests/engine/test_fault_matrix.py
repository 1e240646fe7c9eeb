"""Every fault against every surface (tests/helpers/fault_matrix.py), and docs/faults.md kept
equal to what these tests observe.

Each case asserts what must hold whatever the wording: one line, the text that arrived kept,
the next request working, nothing of an escape sequence on the terminal. The last test renders
the document from the results and compares it with docs/faults.md
(`python -m tests.faults_report` rewrites it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from helpers.fault_matrix import CASES, DOC, SURFACES, FaultCase, Outcome, render
from helpers.fault_server import FaultServer

# The last test renders the document from every case's result: on one worker of a parallel run.
pytestmark = pytest.mark.xdist_group("fault_matrix")

RESULTS: dict[str, dict[str, Outcome]] = {surface: {} for surface in SURFACES}
WRITE_ENV = "FIRSTTOKEN_WRITE_FAULTS_DOC"


@pytest.fixture(scope="module")
def fault_server() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


CASE_IDS = [case.fault + ("-trim" if case.trim else "") for case in CASES]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("surface", list(SURFACES))
def test_fault(surface: str, case: FaultCase, fault_server: FaultServer) -> None:
    outcome = SURFACES[surface](case, fault_server)
    RESULTS[surface][case.name] = outcome
    assert "\n" not in outcome.message
    assert not outcome.partial_kept.startswith("NO"), outcome
    assert not outcome.next_works.startswith("NO"), outcome
    assert outcome.terminal_inert != "NO", outcome
    ok = outcome.status.split()[0] == "ok"
    assert ok == (outcome.kind == "—"), outcome
    if surface == "ask":
        exit_code = int(outcome.status.rsplit("exit ", 1)[1].rstrip(")"))
        assert exit_code == (0 if ok else 1), outcome


def test_docs_faults_md_matches_the_results() -> None:
    ran = sum(len(outcomes) for outcomes in RESULTS.values())
    if ran < len(CASES) * len(SURFACES):
        pytest.skip("only part of the matrix ran (-k): the document needs all of it")
    document = render(RESULTS)
    if os.environ.get(WRITE_ENV):
        DOC.parent.mkdir(exist_ok=True)
        DOC.write_text(document, encoding="utf-8")
    assert DOC.exists(), "docs/faults.md is missing: run python -m tests.faults_report"
    assert DOC.read_text(encoding="utf-8") == document, (
        "docs/faults.md differs from what the fault tests observe: "
        "run python -m tests.faults_report and review the change"
    )
