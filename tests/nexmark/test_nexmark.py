"""Nexmark's queries (tests/nexmark/queries) on this product against Flink 2.3's stored answers.

One events directory (EVENTS events of Nexmark's generator, written once) and the test server
serve every query. Each supported query's SELECT must give Flink's final table (compare.py:
exactly typed values, Flink's column types) with a valid changelog (no retraction of a row
that is not there); each query of ``known.UNSUPPORTED`` and ``known.FLINK_REFUSES`` must be
refused by the product's own error, and a listed difference (``known.DIFFERENT``) must still
be that difference: the lists can only shrink. The stored answers must have been made from
the current queries, tables and event options (their key), else: regenerate them on Flink
(``python -m tests.nexmark.conformance``, README).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from tableapi.errors import ValidationError
from tests.nexmark.conformance import (
    ANSWERS_DIR,
    MAY_BE_EMPTY,
    answer_key,
    load_answer,
    run_product,
    write_events,
    write_side_input,
)
from tests.nexmark.known import (
    ACCEPTS_WHAT_FLINK_REFUSES,
    CLOCK_DEPENDENT,
    DIFFERENT,
    FLINK_REFUSES,
    UNSUPPORTED,
)
from tests.nexmark.queries import QUERY_NAMES
from tests.servers import TestServer

REFUSED = sorted({**UNSUPPORTED, **FLINK_REFUSES}, key=QUERY_NAMES.index)
SUPPORTED = [n for n in QUERY_NAMES if n not in REFUSED]
REGENERATE = "regenerate them on Flink: python -m tests.nexmark.conformance (tests/nexmark/README)"


@pytest.fixture(scope="module")
def nexmark_files(test_server: TestServer) -> tuple[Path, Path]:
    """(events directory, q13's SQLite side input), written once in the server's directory."""
    root = Path(tempfile.mkdtemp(prefix="nexmark-", dir=test_server.shared_dir))
    root.chmod(0o777)
    events = write_events(root / "events")
    _, db = write_side_input(root / "side")
    db.parent.chmod(0o777)  # SQLite beside a server of another user (docker) may need it
    return events, db


def test_stored_answers_are_current() -> None:
    """Every query has Flink's answer, made from the current query text, tables and events,
    with rows (enough events) unless Flink refuses the query."""
    stale, problems = [], []
    for name in QUERY_NAMES:
        path = ANSWERS_DIR / f"{name}.json"
        if not path.exists():
            stale.append(f"{name}: no answer")
            continue
        record = json.loads(path.read_text())
        if record["key"] != answer_key(name):
            stale.append(f"{name}: made from {record['key']}, now {answer_key(name)}")
        elif name in FLINK_REFUSES:
            if not record["error"]:
                problems.append(f"{name}: Flink answers it now: drop it from FLINK_REFUSES")
        elif record["error"]:
            problems.append(f"{name}: Flink failed: {record['error'][:300]}")
        elif not record["rows"] and name not in MAY_BE_EMPTY:
            problems.append(f"{name}: Flink's answer has no rows: more events (EVENTS)?")
    assert not stale, f"stale answers ({REGENERATE}):\n" + "\n".join(stale)
    assert not problems, "\n".join(problems)


@pytest.mark.integration
@pytest.mark.parametrize("name", SUPPORTED)
def test_same_answer_as_flink(
    name: str, nexmark_files: tuple[Path, Path], test_server: TestServer
) -> None:
    from tests.conformance.compare import compare

    answer = load_answer(name)
    product = run_product(name, test_server.url, *nexmark_files)
    if name in CLOCK_DEPENDENT:
        _check_clock_dependent(name, answer, product)
        return
    comparison = compare(answer, product)
    report = f"{name}: {comparison.status}\n{comparison.report()[:4000]}"
    if product["error"]:
        report += "\n" + product.get("traceback", "")[-1500:]
    if name in DIFFERENT:
        status, why = DIFFERENT[name]
        assert not comparison.same, f"agrees with Flink now: drop it from DIFFERENT\n{report}"
        assert comparison.status == status, f"differs otherwise than listed ({status})\n{report}"
        pytest.xfail(why)
    assert comparison.same, report


def _check_clock_dependent(name: str, answer: dict, product: dict) -> None:
    """A processing-time query (``known.CLOCK_DEPENDENT``): it runs, insert-only, with
    Flink's columns and types, and its windows count each bid at most once (q0 passes every
    bid through: its stored answer has one row per bid)."""
    assert not product["error"], product["error"] + product.get("traceback", "")[-1500:]
    assert (product["columns"], product["types"]) == (answer["columns"], answer["types"])
    assert {kind for kind, _ in product["changelog"]} <= {"+I"}
    counts = [row[product["columns"].index("bid_count")] for _, row in product["changelog"]]
    assert sum(counts) <= len(load_answer("q0")["rows"]), f"{name}: {CLOCK_DEPENDENT[name]}"


@pytest.mark.integration
@pytest.mark.parametrize("name", REFUSED)
def test_refused(name: str, nexmark_files: tuple[Path, Path], test_server: TestServer) -> None:
    """A listed query fails with the product's own error, before it runs (a ValidationError:
    SqlParserError or SqlValidationError, naming what is not supported), not Spark's."""
    product = run_product(name, test_server.url, *nexmark_files)
    listed = "FLINK_REFUSES" if name in FLINK_REFUSES else "UNSUPPORTED"
    assert product["error"], f"{name} runs now: remove it from {listed} (tests/nexmark/known.py)"
    error = product["exception"]
    assert isinstance(error, ValidationError), f"not the product's own error: {product['error']}"
    if name in UNSUPPORTED:
        assert "support" in str(error), f"the error does not say what is unsupported: {error}"


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(ACCEPTS_WHAT_FLINK_REFUSES))
def test_accepts_what_flink_refuses(
    name: str, nexmark_files: tuple[Path, Path], test_server: TestServer
) -> None:
    """Nexmark's own text of an adapted query, which Flink refuses, still plans here."""
    from tableapi import TableEnvironment
    from tests.nexmark.conformance import prepare_product
    from tests.nexmark.queries import load

    nexmark, adapted, why = ACCEPTS_WHAT_FLINK_REFUSES[name]
    select = load(name).select
    assert adapted in select, f"{name} no longer has {adapted!r}: update the list"
    env = TableEnvironment.create(mode="streaming", remote=test_server.url)
    try:
        prepare_product(env, name, *nexmark_files)
        env.sql_query(select.replace(adapted, nexmark))  # plans only: nothing runs
    except ValidationError as e:
        pytest.fail(f"refused now, as by Flink: drop {name} from ACCEPTS_WHAT_FLINK_REFUSES ({e})")
    finally:
        env.close()
    pytest.xfail(why)
