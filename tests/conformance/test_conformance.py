"""The conformance suite's CI part: fixed cases on Apache Flink 2.3 and on this product.

Runs one case of every family (seeds in ``CI_SEEDS``), once as a Table API program and once
as Flink's SQL text (``-sql``: the same string Flink runs), plus the minimal reproductions
kept in ``tests/conformance/repros/`` (one per known difference). Flink answers all of them
first, in one JVM, in its own virtualenv (``.flink-venv/``, installed on first use by
flink_env); each case then runs on the test server and must give Flink's final table, with
Flink's column types, and a valid changelog.

Differences known today are expected failures, each checked to still be what it was:

- a repro file carrying ``known_difference`` (why) and ``known_status`` (``compare``'s status:
  ``types``, ``different``, ``error``) must still differ with that status: it is an xfail
  then; one that agrees now, or differs otherwise, fails (and its entry goes, or the
  difference is new);
- a case whose only differences are result column types of a cause in
  ``KNOWN_TYPE_DIFFERENCES`` (README, "Differences this suite found") is an xfail; its rows
  are still compared (a row that differs fails the case).

``TABLEAPI_CONFORMANCE_STRICT=1`` runs them all as plain tests (every known difference fails).

More by hand: ``python -m tests.conformance --cases 300 --seed 5``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conformance.compare import Comparison, compare
from tests.conformance.generator import FAMILIES, generate
from tests.conformance.suite import failure_text, load_case, run_flink
from tests.servers import TestServer

pytestmark = pytest.mark.integration

# (family -> seed): case 0 of each family. Chosen for what they draw: seed 421's changelog,
# multiway and lookup (a changelog probe with a primary key, fed incrementally) cases hold
# several changes of one key in one file; its interval and temporal cases have rows behind
# their table's watermark that share a key with the other table.
CI_SEEDS = dict.fromkeys(FAMILIES, 421)
REPROS = Path(__file__).resolve().parent / "repros"

#: Result column types the product gets wrong today, whose rows still count (README,
#: "Differences this suite found"): cause -> does it explain (case, column, Flink's type, the
#: product's type)? Empty: differences 14-16 are fixed.
KNOWN_TYPE_DIFFERENCES: dict[str, Callable[[dict, str, str, str], bool]] = {}


def known_type_causes(case: dict, comparison: Comparison) -> list[str] | None:
    """The known causes of a type-only difference, or None when one column is unexplained.

    Example:
        >>> c = Comparison(False, "types", [], [], [], [("a_rt", "TIMESTAMP(3) *ROWTIME*",
        ...                                                "TIMESTAMP(3)")])
        >>> known_type_causes({}, c) is None  # no known cause left
        True
    """
    if comparison.status != "types":
        return None
    causes = []
    for column, flink, product in comparison.types:
        cause = next(
            (n for n, f in KNOWN_TYPE_DIFFERENCES.items() if f(case, column, flink, product)),
            None,
        )
        if cause is None:
            return None
        causes.append(cause)
    return sorted(set(causes))


def ci_cases() -> list[dict]:
    """The fixed cases: one per family, each also via SQL (the product given Flink's SQL
    text), then the kept reproductions."""
    cases = []
    for family, seed in CI_SEEDS.items():
        case = generate(family, seed, 0)
        case["id"] = f"{family}-{seed}-0"  # generate()'s ids are unique per family
        cases.append(case)
        cases.append({**case, "id": f"{case['id']}-sql", "via": "sql"})
    for path in sorted(REPROS.glob("*.json")):
        case = load_case(path)
        case["id"] = f"repro-{path.stem}"
        cases.append(case)
    return cases


CASES = ci_cases()
STRICT = os.environ.get("TABLEAPI_CONFORMANCE_STRICT") == "1"


@pytest.fixture(scope="module")
def flink_answers() -> dict[str, dict]:
    """Flink's answers to every case (one Flink process; installs PyFlink when missing)."""
    return run_flink(CASES, log=print)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
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
    report = failure_text(case, answer, product, comparison)
    known = case.get("known_difference")
    if known and not STRICT:
        want = case.get("known_status", "different")
        assert not comparison.same, f"agrees with Flink now: drop its known_difference\n{report}"
        assert comparison.status == want, f"differs otherwise than known ({want})\n{report}"
        pytest.xfail(known)
    causes = known_type_causes(case, comparison)
    if causes and not STRICT:
        pytest.xfail("known type differences: " + "; ".join(causes))
    assert comparison.same, report
