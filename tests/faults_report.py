"""Rewrite docs/faults.md from the fault matrix's results: `python -m tests.faults_report`.

Runs tests/engine/test_fault_matrix.py with the document-writing switch on; the same run
without it (as CI's does) fails when the document differs from the results.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    os.environ["FIRSTTOKEN_WRITE_FAULTS_DOC"] = "1"
    test = ROOT / "tests" / "engine" / "test_fault_matrix.py"
    code = int(pytest.main([str(test), "-q", "-p", "no:cacheprovider", *sys.argv[1:]]))
    if code == 0:
        print(f"wrote {ROOT / 'docs' / 'faults.md'}")
    return code


if __name__ == "__main__":
    sys.exit(main())
