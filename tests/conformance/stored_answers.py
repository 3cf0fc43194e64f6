"""Flink's answers to CI's fixed conformance cases, kept in the repository.

CI runs on a fresh machine: without these it would install PyFlink (about 800 MiB) and run
Flink on every case (about 3 minutes of CI's budget) for answers that change only when a case
or Flink's version does. An answer is stored under its case's content key (``suite.case_key``:
the case's tables, functions and query, Flink's version and the answer format), so a case
that changes finds no stored answer and is answered by Flink again (and
``test_every_ci_case_has_its_stored_answer`` says to regenerate them).

    python -m tests.conformance.stored_answers          # regenerate on Flink 2.3 (its venv)
    python -m tests.conformance.stored_answers --check  # every CI case has its answer

Example:
    >>> stored_path({"tables": [], "query": {}}).parent.name
    'flink_answers'
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.conformance.model import Case
from tests.conformance.suite import STORED_DIR, case_key, run_flink


def stored_path(case: Case) -> Path:
    """Where ``case``'s Flink answer is kept."""
    return STORED_DIR / f"{case_key(case)}.json"


def missing(cases: Sequence[Case]) -> list[str]:
    """The ids of the cases without a stored answer."""
    return [c["id"] for c in cases if not stored_path(c).exists()]


def store(cases: Sequence[Case]) -> list[Path]:
    """Run ``cases`` on Flink (its cache set aside: every answer fresh) and keep the answers
    in :data:`STORED_DIR`, the answers of no case removed; a case Flink fails on is an
    error."""
    answers = run_flink(cases, log=print, cached=False)
    failed = {i: a["error"] for i, a in answers.items() if a.get("error")}
    if failed:
        raise SystemExit(f"Flink failed on {sorted(failed)}: {failed}")
    STORED_DIR.mkdir(exist_ok=True)
    keep = set()
    for case in cases:
        path = stored_path(case)
        answer = {k: v for k, v in answers[case["id"]].items() if k not in ("id", "seconds")}
        if not (path.exists() and _same_answer(json.loads(path.read_text()), answer)):
            path.write_text(json.dumps(answer, sort_keys=True, indent=None) + "\n")
        keep.add(path)
    for stale in set(STORED_DIR.glob("*.json")) - keep:
        stale.unlink()
    return sorted(keep)


def _same_answer(old: dict, new: dict) -> bool:
    """The same final table, columns, types and error: the stored file stays (Flink's
    changelog of one answer may come in another order from run to run)."""
    fixed = ("columns", "types", "error", "sql")

    def rows(answer: dict) -> list[str]:
        return sorted(json.dumps(r) for r in answer.get("final") or [])

    return all(old.get(k) == new.get(k) for k in fixed) and rows(old) == rows(new)


def ci_cases() -> list[Case]:
    """CI's cases (``test_conformance``'s, on both servers)."""
    from tests.conformance.test_conformance import CASES, SPILL_CASES

    return [*CASES, *SPILL_CASES]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.stored_answers")
    parser.add_argument("--check", action="store_true", help="only check none is missing")
    args = parser.parse_args(argv)
    cases = ci_cases()
    if args.check:
        lost = missing(cases)
        print(f"{len(cases) - len(lost)} of {len(cases)} CI cases have a stored answer")
        return 1 if lost else 0
    paths = store(cases)
    print(f"stored {len(paths)} answers in {STORED_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
