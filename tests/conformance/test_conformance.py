"""The conformance suite's CI part: fixed cases on Apache Flink 2.3 and on this product.

Runs every family's cases of a fixed seed list plus the minimal reproductions kept in
``tests/conformance/repros/`` (one per known difference). Flink answers all of them first, in
one JVM, in its own virtualenv (``.flink-venv/``, installed on first use by flink_env); each
case then runs on the test server and must give Flink's final table with a valid changelog.

Differences known today are strict xfails: a case listed in ``KNOWN`` (generated cases) or
carrying ``known_difference`` (a repro file) must still differ; once a fix makes it agree,
it XPASSes, fails, and its entry goes. ``TABLEAPI_CONFORMANCE_STRICT=1`` runs them all as
plain tests (every known difference fails).

More by hand: ``python -m tests.conformance --cases 300 --seed 5``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.conformance.compare import compare
from tests.conformance.generator import FAMILIES, generate
from tests.conformance.suite import failure_text, load_case, run_flink
from tests.servers import TestServer

pytestmark = pytest.mark.integration

# (seed, cases per family): 4 cases of each family. With the reproductions, 50 cases: about
# 1 min to install PyFlink, 1-2 min of Flink, 3-4 min of the product on a busy 2-core machine.
CI_SEEDS = ((11, 2), (12, 2))
# (family, seed, n): cases the seeds above miss: lookup joins over changelog probes (a left
# join with a CAST computed column, FULL cache; an inner join hashed on the upsert key with a
# residual, PARTIAL cache).
CI_EXTRA = (("lookup", 11, 4), ("lookup", 11, 19))
REPROS = Path(__file__).resolve().parent / "repros"
KNOWN: dict[str, str] = {}  # generated CI cases that differ today, and why (README.md)


def ci_cases() -> list[dict]:
    """The fixed cases: the seeds' cases of every family and the extra ones, then the kept
    reproductions."""
    cases = []
    picked = [(f, seed, n) for seed, k in CI_SEEDS for f in FAMILIES for n in range(k)]
    for family, seed, n in picked + list(CI_EXTRA):
        case = generate(family, seed, n)
        case["id"] = f"{family}-{seed}-{n}"  # generate()'s ids are unique per family
        cases.append(case)
    for path in sorted(REPROS.glob("*.json")):
        case = load_case(path)
        case["id"] = f"repro-{path.stem}"
        cases.append(case)
    return cases


def _param(case: dict) -> object:
    why = KNOWN.get(case["id"]) or case.get("known_difference")
    if not why or os.environ.get("TABLEAPI_CONFORMANCE_STRICT") == "1":
        return pytest.param(case, id=case["id"])
    return pytest.param(case, id=case["id"], marks=pytest.mark.xfail(strict=True, reason=why))


CASES = ci_cases()


@pytest.fixture(scope="module")
def flink_answers() -> dict[str, dict]:
    """Flink's answers to every case (one Flink process; installs PyFlink when missing)."""
    return run_flink(CASES, log=print)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_same_final_table_as_flink(
    case: dict, flink_answers: dict[str, dict], test_server: TestServer
) -> None:
    from tests.conformance.product import run_case

    workdir = Path(tempfile.mkdtemp(prefix="conformance-", dir=test_server.shared_dir))
    workdir.chmod(0o777)
    answer = flink_answers[case["id"]]
    assert not answer.get("error"), f"Flink failed on case {case['id']}: {answer['error']}"
    product = run_case(case, test_server.url, workdir)
    comparison = compare(answer, product)
    assert comparison.same, failure_text(case, answer, product, comparison)
