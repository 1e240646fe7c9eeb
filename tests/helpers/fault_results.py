"""The fault matrix's outcomes, kept in a folder every test worker of a run writes to, and
docs/faults.md compared with them once, at the run's end (tests/conftest.py). Light on
imports: the root conftest loads it in every run."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from helpers.fault_matrix import Outcome

RESULTS_ENV = "FIRSTTOKEN_FAULT_RESULTS"  # the folder every worker writes its outcomes to
WRITE_ENV = "FIRSTTOKEN_WRITE_FAULTS_DOC"


def keep(surface: str, case: str, outcome: Outcome) -> None:
    """One case's outcome, where the run's end reads them all (any worker, any order)."""
    import dataclasses

    folder = os.environ.get(RESULTS_ENV)
    if not folder:
        return
    name = hashlib.sha256(f"{surface}\n{case}".encode()).hexdigest()[:16]
    data: dict[str, Any] = {
        "surface": surface,
        "case": case,
        "outcome": dataclasses.asdict(outcome),
    }
    (Path(folder) / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")


def document_problem(folder: Path) -> str | None:
    """At the end of a run: docs/faults.md against what every case observed (rewritten with
    FIRSTTOKEN_WRITE_FAULTS_DOC=1); None when they agree or only part of the matrix ran."""
    paths = list(folder.glob("*.json"))
    if not paths:
        return None
    from helpers.fault_matrix import CASES, DOC, SURFACES, Outcome, render

    results: dict[str, dict[str, Outcome]] = {surface: {} for surface in SURFACES}
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        results[data["surface"]][data["case"]] = Outcome(**data["outcome"])
    if sum(len(outcomes) for outcomes in results.values()) < len(CASES) * len(SURFACES):
        return None  # -k, -m or a failure left cases out: the document needs all of them
    document = render(results)
    if os.environ.get(WRITE_ENV):
        DOC.write_text(document, encoding="utf-8")
        return None
    if DOC.exists() and DOC.read_text(encoding="utf-8") == document:
        return None
    return (
        "docs/faults.md differs from what the fault tests observed: "
        "run python -m tests.faults_report and review the change"
    )
