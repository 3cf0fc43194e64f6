"""A changelog's files are applied in the order they were written, to the nanosecond.

Files written back to back mostly share a millisecond, and Spark's file times have only
milliseconds: before ``__seq`` took each file's time in nanoseconds, the (random) names of
two such files decided, and about half the time a retraction was applied before the row it
retracts (the shapes below, from issue 30, gave ``(a, 3, 9, 4)`` where Flink says
``(a, 7, 9, 2)``). Where two files still tie, the query fails naming them, unless the table
says ``'changelog.file-order' = 'name'``.

Every query here reads many pairs of files written back to back with random names, so that
a fault that reorders one pair in ten cannot pass: one query holds 12 pairs (0.9^12 < 0.3 per
query, and each test runs several). ``TABLEAPI_FILE_ORDER_ROUNDS`` repeats the randomized
stress test (by hand: 20 rounds).
"""

from __future__ import annotations

import os
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tableapi import TableEnvironment, col
from tests.integration.changelog_files import Change, ChangelogTable, applied, fresh_root

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

PAIRS = 12  # instances of a shape in one query, each two files written back to back
ROUNDS = int(os.environ.get("TABLEAPI_FILE_ORDER_ROUNDS", "2"))


@pytest.fixture(scope="module")
def senv(server_url: str) -> Iterator[TableEnvironment]:
    env = TableEnvironment.create(mode="streaming", remote=server_url)
    yield env
    env.close()


def changelog_of(result: Any) -> list[tuple[str, tuple[Any, ...]]]:
    return [(r.kind.short_string, tuple(r)) for r in result.collect()]


def rows_of(frame: Any) -> Counter[tuple[Any, ...]]:
    return Counter(
        tuple(None if v is None or v != v else v for v in r) for r in frame.itertuples(index=False)
    )


def aggregate_table(env: TableEnvironment, root: Path, **options: Any) -> ChangelogTable:
    return ChangelogTable(
        env,
        root,
        "T",
        [("id", "INT"), ("k", "STRING"), ("v", "INT")],
        primary_key=["id"],
        bounded=True,
        **options,
    )


def write_aggregate_shape(t: ChangelogTable, i: int) -> None:
    """Issue 30's aggregate shape, instance ``i`` (its own ids and keys): inserts in one file,
    their deletes and updates in the next."""
    a, b, n = f"a{i}", f"b{i}", 10 * i
    t.append(
        [("+I", (n + 1, a, 5)), ("+I", (n + 2, a, 3)), ("+I", (n + 3, a, 7)), ("+I", (n + 4, b, 1))]
    )
    t.append(
        [("-D", (n + 2, a, 3)), ("-U", (n + 1, a, 5)), ("+U", (n + 1, a, 9)), ("-D", (n + 4, b, 1))]
    )


def min_max_count(rows: Counter[tuple[Any, ...]]) -> Counter[tuple[Any, ...]]:
    """``SELECT k, MIN(v), MAX(v), COUNT(v) ... GROUP BY k`` in Python."""
    groups: dict[str, list[int]] = {}
    for (_, k, v), n in rows.items():
        groups.setdefault(k, []).extend([v] * n)
    return Counter((k, min(vs), max(vs), len(vs)) for k, vs in groups.items() if vs)


def test_an_aggregate_applies_the_retractions_of_the_next_file_after_its_inserts(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    t = aggregate_table(senv, fresh_root(senv, shared_dir, "T"), random_names=True)
    for i in range(PAIRS):
        write_aggregate_shape(t, i)

    result = senv.sql_query("SELECT k, MIN(v), MAX(v), COUNT(v) FROM T GROUP BY k").execute()

    want = min_max_count(t.rows)
    assert want == Counter((f"a{i}", 7, 9, 2) for i in range(PAIRS))
    assert applied(changelog_of(result)) == want
    assert rows_of(result.materialize()) == want


def left_join(
    orders: Counter[tuple[Any, ...]], products: Counter[tuple[Any, ...]]
) -> Counter[tuple[Any, ...]]:
    """``orders LEFT JOIN products ON product_id = id`` -> (order_id, name), in Python."""
    out: Counter[tuple[Any, ...]] = Counter()
    for (order_id, product_id), n in orders.items():
        names = [name for (pid, name), m in products.items() for _ in range(m) if pid == product_id]
        for name in names or [None]:
            out[(order_id, name)] += n
    return +out


def test_a_left_join_applies_each_tables_files_in_the_order_they_were_written(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    root = fresh_root(senv, shared_dir, "Orders", "Products")
    key = [("order_id", "INT"), ("product_id", "INT")]
    orders = ChangelogTable(
        senv, root, "Orders", key, ["order_id"], bounded=True, random_names=True
    )
    columns = [("id", "INT"), ("name", "STRING")]
    products = ChangelogTable(
        senv, root, "Products", columns, ["id"], bounded=True, random_names=True
    )
    for i in range(PAIRS):  # issue 30's join shape, instance i
        n = 100 * i
        orders.append([("+I", (n + 1, n + 10)), ("+I", (n + 2, n + 11)), ("+I", (n + 3, n + 12))])
        products.append([("+I", (n + 10, "fruit")), ("+I", (n + 11, "veg"))])
        orders.append([("-D", (n + 2, n + 11))])
        products.append([("-U", (n + 10, "fruit")), ("+U", (n + 10, "nuts"))])

    o, p = senv.from_path("Orders"), senv.from_path("Products")
    result = (
        o.left_outer_join(p, col("product_id") == col("id"))
        .select(col("order_id"), col("name"))
        .execute()
    )

    want = left_join(orders.rows, products.rows)
    assert want == Counter(
        row for i in range(PAIRS) for row in [(100 * i + 1, "nuts"), (100 * i + 3, None)]
    )
    assert applied(changelog_of(result)) == want
    assert rows_of(result.materialize()) == want


def random_changes(
    rng: random.Random, table: dict[int, tuple[int, int]], ids: range, keys: int
) -> list[Change]:
    """A few changes to ``table`` (id -> (k, v), changed in place): inserts of absent ids,
    updates and deletes of present ones."""
    changes: list[Change] = []
    for _ in range(rng.randint(1, 3)):
        i = rng.choice(ids)
        if i not in table:
            table[i] = (rng.randrange(keys), rng.randrange(100))
            changes.append(("+I", (i, *table[i])))
        elif rng.random() < 0.5:
            changes.append(("-U", (i, *table[i])))
            table[i] = (rng.randrange(keys), rng.randrange(100))
            changes.append(("+U", (i, *table[i])))
        else:
            changes.append(("-D", (i, *table.pop(i))))
    return changes


def inner_join(
    left: Counter[tuple[Any, ...]], right: Counter[tuple[Any, ...]]
) -> Counter[tuple[Any, ...]]:
    return Counter(
        {
            (li, k, lv, ri, rv): n * m
            for (li, k, lv), n in left.items()
            for (ri, rk, rv), m in right.items()
            if k == rk
        }
    )


def sums(rows: Counter[tuple[Any, ...]]) -> Counter[tuple[Any, ...]]:
    """``SELECT k, COUNT(*), SUM(v), MIN(v), MAX(v) ... GROUP BY k`` in Python."""
    groups: dict[int, list[int]] = {}
    for (_, k, v), n in rows.items():
        groups.setdefault(k, []).extend([v] * n)
    return Counter((k, len(vs), sum(vs), min(vs), max(vs)) for k, vs in groups.items() if vs)


@pytest.mark.parametrize("seed", range(ROUNDS))
def test_many_small_files_written_as_fast_as_possible(
    senv: TableEnvironment, shared_dir: Path, seed: int
) -> None:
    """Random inserts, updates and deletes of 40 ids over 6 keys in each of two tables, 1-3
    changes a file, 150 files written as fast as possible with random names (the two tables'
    files interleaved): a join of the two and an aggregation, checked against Python,
    changelog and final table."""
    rng = random.Random(3000 + seed)
    root = fresh_root(senv, shared_dir, "L", "R")
    cols = [("id", "INT"), ("k", "INT"), ("v", "INT")]
    tables = {
        name: ChangelogTable(senv, root, name, cols, ["id"], bounded=True, random_names=True)
        for name in ("L", "R")
    }
    contents: dict[str, dict[int, tuple[int, int]]] = {"L": {}, "R": {}}
    for _ in range(150):
        name = rng.choice("LR")
        tables[name].append(random_changes(rng, contents[name], range(40), 6))

    joined = senv.sql_query("SELECT L.id, L.k, L.v, R.id, R.v FROM L JOIN R ON L.k = R.k").execute()
    aggregated = senv.sql_query(
        "SELECT k, COUNT(*), SUM(v), MIN(v), MAX(v) FROM L GROUP BY k"
    ).execute()

    want_join = +inner_join(tables["L"].rows, tables["R"].rows)
    assert applied(changelog_of(joined)) == want_join
    assert rows_of(joined.materialize()) == want_join
    want_sums = sums(tables["L"].rows)
    assert applied(changelog_of(aggregated)) == want_sums
    assert rows_of(aggregated.materialize()) == want_sums


def test_two_files_that_tie_fail_the_query_naming_both(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    t = aggregate_table(senv, fresh_root(senv, shared_dir, "T"), random_names=True)
    write_aggregate_shape(t, 0)
    files = sorted(t.path.glob("part-*.json"))
    tie = files[0].stat().st_mtime_ns
    for f in files[1:]:
        os.utime(f, ns=(tie, tie))  # (a coarse filesystem clock, or a copy that kept times)

    with pytest.raises(Exception) as failure:
        senv.sql_query("SELECT k, v FROM T WHERE v > 0").execute().collect()

    message = str(failure.value)
    assert "the same modification time" in message, message
    assert "'changelog.file-order' = 'name'" in message, message
    assert sum(f.name in message for f in files) == 2, message


def test_name_order_applies_numbered_files_that_tie_in_name_order(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    t = aggregate_table(senv, fresh_root(senv, shared_dir, "T"), file_order="name")
    for i in range(PAIRS):
        write_aggregate_shape(t, i)
    tie = min(f.stat().st_mtime_ns for f in t.path.glob("part-*.json"))
    for f in sorted(t.path.glob("part-*.json"), reverse=True):
        os.utime(f, ns=(tie, tie))

    result = senv.sql_query("SELECT k, MIN(v), MAX(v), COUNT(v) FROM T GROUP BY k").execute()

    want = min_max_count(t.rows)
    assert applied(changelog_of(result)) == want
    assert rows_of(result.materialize()) == want


def test_a_retraction_of_a_row_never_seen_is_dropped_and_counted(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    """Flink drops it; the product drops it too, but counts it (and its server logs a
    warning), so that a changelog out of order does not pass in silence."""
    from tableapi.compiler.jvm_operators import jvm_unseen_retractions

    t = aggregate_table(senv, fresh_root(senv, shared_dir, "T"))
    t.append([("+I", (1, "a", 5))])
    with open(t.path / "part-zz-unseen.json", "w") as f:  # a -D of a row never inserted
        f.write('{"id": 2, "k": "b", "v": 3, "op": "-D"}\n')
    before = jvm_unseen_retractions(senv.spark).get("aggregate", 0)

    result = senv.sql_query("SELECT k, COUNT(*) FROM T GROUP BY k").execute()

    assert changelog_of(result) == [("+I", ("a", 1))]
    assert jvm_unseen_retractions(senv.spark).get("aggregate", 0) == before + 1
