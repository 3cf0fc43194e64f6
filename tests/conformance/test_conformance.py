"""The conformance suite's CI part: fixed cases on Apache Flink 2.3 and on this product.

Runs one case of every family (seeds in ``CI_SEEDS``), once as a Table API program and once
as Flink's SQL text (``-sql``: the same string Flink runs), plus the minimal reproductions
kept in ``tests/conformance/repros/`` (one per known difference). Flink's answers to them are
kept in ``tests/conformance/flink_answers/`` (``stored_answers.py`` regenerates them on Flink,
in its own virtualenv ``.flink-venv/``, in one JVM; a case without one is answered by Flink
then, installed on first use by flink_env); each case then runs on the test server and must
give Flink's final table, with Flink's column types, and a valid changelog. The family cases'
final tables must also be the plain-Python answer (``reference.py``), whose counts of joined
and retracted rows test_generator checks.

``SPILL_CASES`` run again on a server of their own whose sorts spill at every row (the CLI's,
``__main__.SPILL_CONF``): the repros of differences 19 and 20 and a chain of joins, whose
changes of one key keep their order there only if the product carries it in its rows.

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
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conformance.__main__ import SPILL_CONF
from tests.conformance.compare import Comparison, compare
from tests.conformance.generator import generate
from tests.conformance.reference import differences_from
from tests.conformance.suite import failure_text, load_case, run_flink
from tests.servers import TestServer

pytestmark = pytest.mark.integration

#: (family -> seed): case 0 of that seed, drawn so that every join joins rows and, where the
#: inputs are changelogs, retractions take joined rows apart and their keys join again
#: (test_generator checks CI_MINIMUM on each in the plain-Python answer, reference.py).
CI_SEEDS = {
    # streaming FULL JOIN in server_ext's operator (spark-native off): 8 pairs of key 3, 1 of
    # key 1, a NULL key padded
    "regular": 22,
    # streaming RIGHT JOIN of two changelogs (B with a primary key), fed file by file: B's
    # key 2 inserted, deleted and inserted again, A's rows updated across keys (8 joined
    # pairs taken apart, 5 joined again)
    "changelog": 6,
    # streaming FULL interval join (`a_rt BETWEEN b_rt + 4 s AND b_rt + 8 s`): 2 pairs in the
    # window, late rows in both tables, rows of key 3 out of it padded
    "interval": 41,
    # streaming LEFT JOIN R FOR SYSTEM_TIME AS OF a_rt: k1's probes at 0 s and 8 s take its
    # two versions, k3's its second; a late probe row, a NULL key padded
    "temporal": 104,
    # four-way inner chain with the multi-way join on: D a changelog with a burst of updates
    # of key k2 in one file (20 pairs taken apart, 5 joined again)
    "multiway": 11,
    # streaming FULL JOIN on computed keys SIGN(a_k - 2) = COALESCE(b_k, 0) (NULL turned 0)
    "computed": 151,
    # (a_k, a_v) NOT IN a filtered subquery (null-aware: a NULL probe key drops its row)
    "subquery": 38,
    # inner lookup join (jdbc, FULL cache) of a changelog probe with a primary key, fed
    # incrementally: key 1 inserted, deleted and inserted again in one file; a CAST computed
    # column of the dimension table as output
    "lookup": 81,
    # COUNT grouped by columns of both sides of a join of two changelogs, HAVING, fed
    # incrementally (16 joined pairs taken apart, 8 joined again)
    "aggregate": 2,
    # streaming FULL window join of two HOP TVFs (slide 3 s, size 6 s) on a_k = b_k: 17
    # pairs in shared windows, rows of windows the other side lacks padded (SQL text only:
    # windows have no Table API)
    "window": 145,
}
#: What each CI case's rows must do at least (reference.activity): pairs joined at every
#: join; where an input is a changelog, joined pairs (or aggregate rows) its retractions take
#: apart, and insertions that join a key again after its retraction.
CI_MINIMUM = {"joined": 2, "retracted": 2, "rematched": 1}
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
        if case.get("via") != "sql":  # the window family's cases are SQL text already
            cases.append({**case, "id": f"{case['id']}-sql", "via": "sql"})
    for path in sorted(REPROS.glob("*.json")):
        case = load_case(path)
        case["id"] = f"repro-{path.stem}"
        cases.append(case)
    return cases


#: The repros of the differences that only a server whose sorts spill shows (README: 19, a
#: table's changes of one key in one file; 20, a join's changes reaching the next join).
SPILL_REPROS = ("changelog-one-file-same-key-out-of-order", "chained-joins-operator-output-order")
#: And a chain of joins (multi-way join off) from the generator: (A LEFT JOIN B) RIGHT JOIN C,
#: A and B changelogs with bursts of one key in one file, 52 joined pairs taken apart.
SPILL_CHAIN = ("multiway", 328)


def spill_cases() -> list[dict]:
    """The cases run on the spilling server (ids ``spill-...``)."""
    cases = []
    for name in SPILL_REPROS:
        case = load_case(REPROS / f"{name}.json")
        case["id"] = f"spill-{name}"
        cases.append(case)
    family, seed = SPILL_CHAIN
    cases.append({**generate(family, seed, 0), "id": f"spill-{family}-{seed}-0"})
    return cases


CASES = ci_cases()
DRAWN = [c for c in CASES if c["id"] == f"{c['family']}-{CI_SEEDS.get(c['family'])}-0"]
SPILL_CASES = spill_cases()
STRICT = os.environ.get("TABLEAPI_CONFORMANCE_STRICT") == "1"


def test_every_ci_case_has_its_stored_answer() -> None:
    """CI answers from the repository, not from a Flink it would install and run: a case
    that changed needs its answer again."""
    from tests.conformance.stored_answers import missing

    lost = missing(CASES + SPILL_CASES)
    assert not lost, (
        f"no stored Flink answer for {lost}: run `python -m tests.conformance.stored_answers` "
        "(it runs them on Flink 2.3) and commit tests/conformance/flink_answers/"
    )


@pytest.fixture(scope="module")
def flink_answers() -> dict[str, dict]:
    """Flink's answers to every case (one Flink process; installs PyFlink when missing)."""
    return run_flink(CASES + SPILL_CASES, log=print)


@pytest.fixture(scope="module")
def spilling_server() -> Iterator[str]:
    """A server of its own whose sorts spill at every row (SPILL_CONF, a core conf: set when
    it starts; test_change_order's spills every 200 rows, which these few rows never reach)."""
    from tableapi.session import EmbeddedServer

    server = EmbeddedServer.start(master="local[2]", conf=SPILL_CONF)
    yield server.url
    server.stop()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_same_final_table_as_flink(
    case: dict, flink_answers: dict[str, dict], test_server: TestServer
) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="conformance-", dir=test_server.shared_dir))
    workdir.chmod(0o777)
    _check(case, flink_answers[case["id"]], test_server.url, workdir)


@pytest.mark.parametrize("case", SPILL_CASES, ids=[c["id"] for c in SPILL_CASES])
def test_same_final_table_as_flink_on_a_spilling_server(
    case: dict, flink_answers: dict[str, dict], spilling_server: str, tmp_path: Path
) -> None:
    _check(case, flink_answers[case["id"]], spilling_server, tmp_path)


@pytest.mark.parametrize("case", DRAWN, ids=[c["id"] for c in DRAWN])
def test_reference_answer_is_flinks(case: dict, flink_answers: dict[str, dict]) -> None:
    """The plain-Python answer whose activity test_generator counts is Flink's final table."""
    answer = flink_answers[case["id"]]
    assert not answer.get("error"), f"Flink failed on case {case['id']}: {answer['error']}"
    assert not differences_from(case, answer["changelog"])


def _check(case: dict, answer: dict, url: str, workdir: Path) -> None:
    """``case`` on the server at ``url``: Flink's final table, types and a valid changelog
    (a known difference: still the same difference)."""
    from tests.conformance.product import run_case

    assert not answer.get("error"), f"Flink failed on case {case['id']}: {answer['error']}"
    product = run_case(case, url, workdir)
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
