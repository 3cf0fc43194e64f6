"""The SQL examples of the Flink documents this product comes from, run as written: each test
holds its statement (verbatim; only the WITH options point at local files or a local
database) and its data, and checks the result the document states (or, where it states
none, the query's meaning computed in plain Python), streaming results change by change.

The documents: notes on Flink SQL's two-stream regular join (semi and anti joins), FLIP-70
(computed columns), Flink's "Joins in Continuous Queries" page (regular, interval,
temporal table function and temporal table joins), FLIP-204 (the SHUFFLE_HASH lookup
hint) and FLIP-516 (multi-way joins)."""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tableapi import TableEnvironment, col
from tableapi.errors import SqlValidationError
from tableapi.result import apply_changelog
from tests.integration.files import _jsonable
from tests.reference import as_bag, eq, nested_loop_join

DAY = dt.datetime(2026, 11, 23)


def at(hh_mm: str) -> dt.datetime:
    h, m = map(int, hh_mm.split(":"))
    return DAY.replace(hour=h, minute=m)


def write(directory: Path, names: Sequence[str], rows: Sequence[Sequence[Any]], n: int = 0):
    """One JSON file of ``rows`` in ``directory`` (atomically: Spark never sees half)."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o777)
    tmp = directory / f".part-{n}.tmp"
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps({k: _jsonable(v) for k, v in zip(names, r, strict=True)}) + "\n")
    os.replace(tmp, directory / f"part-{n}.json")


def files(path: Path, watched: bool = False) -> str:
    """The WITH options of a JSON filesystem table at ``path`` (the local pointing)."""
    extra = ", 'source.monitor-interval' = '100 ms'" if watched else ""
    return f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'json'{extra}"


def changelog(result: Any) -> list[tuple[str, tuple[Any, ...]]]:
    return [(r.kind.short_string, tuple(r)) for r in result.collect()]


def final(result: Any) -> Counter[tuple[Any, ...]]:
    """The table a streaming result's changelog describes (checked to be valid)."""
    return as_bag(apply_changelog(result.collect()))


# -- notes on Flink SQL's two-stream join (seed 000) ------------------------------------------

A_ROWS = [(1, 5, "x"), (1, 1, "y"), (2, 9, "z"), (3, 4, "w"), (None, 7, "n")]
B_ROWS = [(1, 3, "p"), (2, 10, "q"), (2, 1, "r"), (4, 0, "s")]


def register_ab(env: TableEnvironment, root: Path) -> None:
    write(root / "A", ("a1", "a2", "a3"), A_ROWS)
    write(root / "B", ("b1", "b2", "b3"), B_ROWS)
    env.execute_sql(f"CREATE TABLE A (a1 INT, a2 INT, a3 STRING) WITH ({files(root / 'A')})")
    env.execute_sql(f"CREATE TABLE B (b1 INT, b2 INT, b3 STRING) WITH ({files(root / 'B')})")


@pytest.mark.parametrize("mode", ["env", "senv"])
def test_regular_join_of_the_notes(mode: str, request: Any, shared_dir: Path) -> None:
    env = request.getfixturevalue(mode)
    register_ab(env, shared_dir)
    sql = "SELECT a1, b1 FROM A JOIN B ON a1 = b1 and a2 > b2"
    expected = [
        (a[0], b[0])
        for a, b in ((a, b) for a in A_ROWS for b in B_ROWS)
        if eq(a[0], b[0]) and a[1] > b[1]
    ]
    result = env.execute_sql(sql)
    if mode == "senv":
        plan = env.sql_query(sql).explain()
        # the notes' optimized plan: an inner join, keys without unique keys on both sides
        assert "Join(joinType=[InnerJoin]" in plan
        assert "leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey]" in plan
        assert {k for k, _ in changelog(result)} == {"+I"}  # insert-only inputs: inserts
    assert as_bag(tuple(r) for r in result.collect()) == as_bag(expected)


L_ROWS = [(1, "one"), (2, "two"), (5, "five"), (None, "null")]
R_ROWS = [(1, "uno"), (5, "cinco"), (5, "again"), (7, "siete")]


@pytest.mark.parametrize("mode", ["env", "senv"])
def test_semi_and_anti_joins_of_the_notes(mode: str, request: Any, shared_dir: Path) -> None:
    env = request.getfixturevalue(mode)
    write(shared_dir / "l", ("a", "b"), L_ROWS)
    write(shared_dir / "r", ("d", "e"), R_ROWS)
    env.execute_sql(f"CREATE TABLE l (a INT, b STRING) WITH ({files(shared_dir / 'l')})")
    env.execute_sql(f"CREATE TABLE r (d INT, e STRING) WITH ({files(shared_dir / 'r')})")
    semi = "SELECT * FROM l WHERE a IN (SELECT d FROM r)"
    anti = "SELECT * FROM l WHERE a NOT IN (SELECT d FROM r)"
    assert "joinType=[LeftSemiJoin]" in env.sql_query(semi).explain()
    assert "joinType=[LeftAntiJoin]" in env.sql_query(anti).explain()
    ds = {d for d, _ in R_ROWS}
    in_rows = [row for row in L_ROWS if row[0] in ds]
    # NOT IN: a NULL a is unknown against a non-empty r, so it is not kept
    not_in_rows = [row for row in L_ROWS if row[0] is not None and row[0] not in ds]
    for sql, expected in ((semi, in_rows), (anti, not_in_rows)):
        result = env.execute_sql(sql)
        if mode == "env":
            assert as_bag(tuple(r) for r in result.collect()) == as_bag(expected), sql
        else:
            assert final(result) == as_bag(expected), sql
            assert {k for k, _ in changelog(result)} <= {"+I", "-D"}, sql


# -- FLIP-70: computed columns (seed 001) --------------------------------------------------------


def test_flip70_computed_columns_are_virtual(env: TableEnvironment, shared_dir: Path) -> None:
    t1 = shared_dir / "T1"
    t2 = shared_dir / "T2"
    # FLIP-70's two tables as written; only their WITH options point at local files
    env.execute_sql(f"""create table T1(
  a int,
  b bigint,
  c varchar,
  d as PROCTIME,
) with (
  {files(t1)}
);""")
    env.execute_sql(f"""create table T2(
  a int,
  b as a + 1 virtual,
  c bigint,
  e varchar
) with (
  {files(t2)}
);""")
    write(t1, ("a", "b", "c"), [(1, 10, "x"), (2, 20, "y")])
    d = env.execute_sql("SELECT a, b, c, d FROM T1").collect()
    assert [(r.a, r.b, r.c) for r in d] == [(1, 10, "x"), (2, 20, "y")]
    assert all(isinstance(r.d, dt.datetime) for r in d)  # the processing time, computed
    assert env.from_path("T1").row_type.field("d").type.time_kind.name == "PROCTIME"
    # The write: the virtual column b is not stored, so the query gives a, c and e
    t2.mkdir()
    t2.chmod(0o777)
    env.execute_sql("INSERT INTO T2 SELECT a, b, c FROM T1").wait()
    written = [json.loads(line) for f in sorted(t2.glob("*.json")) for line in f.open()]
    assert sorted(tuple(sorted(r)) for r in written) == [("a", "c", "e")] * 2
    # The read: b is computed in a projection right above the scan, which reads a, c, e
    plan = env.sql_query("SELECT * FROM T2").explain()
    assert "(a + 1) AS b" in plan and "fields=[a, c, e]" in plan
    rows = env.execute_sql("SELECT * FROM T2").collect()
    assert sorted(tuple(r) for r in rows) == [(1, 2, 10, "x"), (2, 3, 20, "y")]


# -- Joins in Continuous Queries (seed 002) ----------------------------------------------------


def test_regular_join_takes_changes_of_either_side(senv: TableEnvironment, shared_dir: Path):
    """``SELECT * FROM Orders INNER JOIN Product ON Orders.productId = Product.id``: a
    change of either input changes the result."""
    orders, product = shared_dir / "Orders", shared_dir / "Product"
    senv.execute_sql(
        f"CREATE TABLE Orders (orderId INT, productId INT) WITH ({files(orders, True)})"
    )
    senv.execute_sql(
        f"CREATE TABLE Product (id INT, name STRING) WITH ({files(product, True)}, "
        "'changelog.op-column' = 'op')"
    )
    write(orders, ("orderId", "productId"), [])
    write(product, ("id", "name", "op"), [])
    result = senv.execute_sql(
        "SELECT * FROM Orders\nINNER JOIN Product\nON Orders.productId = Product.id"
    )
    try:
        write(product, ("id", "name", "op"), [(1, "pen", "+I"), (2, "ink", "+I")], 1)
        result.process_all_available()
        write(orders, ("orderId", "productId"), [(10, 1), (11, 2), (12, 3)], 1)
        result.process_all_available()
        write(product, ("id", "name", "op"), [(1, "pen", "-U"), (1, "quill", "+U")], 2)
        result.process_all_available()
        changes = changelog(result)
        # the two orders join in one micro-batch (keys 1 and 2: in either order), then the
        # product's update retracts and replaces the row it joined
        assert sorted(changes[:2]) == [("+I", (10, 1, 1, "pen")), ("+I", (11, 2, 2, "ink"))]
        assert changes[2:] == [("-U", (10, 1, 1, "pen")), ("+U", (10, 1, 1, "quill"))]
        assert final(result) == as_bag([(10, 1, 1, "quill"), (11, 2, 2, "ink")])
    finally:
        result.cancel()


def test_time_windowed_join(senv: TableEnvironment, shared_dir: Path) -> None:
    orders, shipments = shared_dir / "Orders", shared_dir / "Shipments"
    order_rows = [(1, at("10:00")), (2, at("10:30")), (3, at("11:00")), (4, at("12:00"))]
    ship_rows = [
        (101, 1, at("13:00")),  # 3 h after the order: in the window
        (102, 2, at("15:00")),  # 4.5 h after: out
        (103, 3, at("10:00")),  # before the order: out
        (104, 4, at("16:00")),  # exactly 4 h: in
        (105, 9, at("12:30")),  # no order
    ]
    write(orders, ("id", "ordertime"), order_rows)
    write(shipments, ("id", "orderId", "shiptime"), ship_rows)
    senv.execute_sql(
        f"""CREATE TABLE Orders (id INT, ordertime TIMESTAMP(3),
        WATERMARK FOR ordertime AS ordertime - INTERVAL '1' MINUTE) WITH ({files(orders)})"""
    )
    senv.execute_sql(
        f"""CREATE TABLE Shipments (id INT, orderId INT, shiptime TIMESTAMP(3),
        WATERMARK FOR shiptime AS shiptime - INTERVAL '1' MINUTE) WITH ({files(shipments)})"""
    )
    sql = """SELECT *
FROM
  Orders o,
  Shipments s
WHERE o.id = s.orderId AND
      o.ordertime BETWEEN s.shiptime - INTERVAL '4' HOUR AND s.shiptime"""
    assert "IntervalJoin(joinType=[InnerJoin]" in senv.sql_query(sql).explain()
    result = senv.execute_sql(sql)
    assert result.column_names == ("id", "ordertime", "id0", "orderId", "shiptime")
    expected = [
        o + s
        for o in order_rows
        for s in ship_rows
        if o[0] == s[1] and s[2] - dt.timedelta(hours=4) <= o[1] <= s[2]
    ]
    assert {k for k, _ in changelog(result)} == {"+I"}
    assert as_bag(tuple(r) for r in result.collect()) == as_bag(expected)


ORDERS_TTF = [  # rowtime, amount, currency: the page's Orders
    (at("10:15"), 2, "Euro"),
    (at("10:30"), 1, "US Dollar"),
    (at("10:32"), 50, "Yen"),
    (at("10:52"), 3, "Euro"),
    (at("11:04"), 5, "US Dollar"),
]
RATES_HISTORY = [  # rowtime, currency, rate: the page's RatesHistory
    (at("09:00"), "US Dollar", 102),
    (at("09:00"), "Euro", 114),
    (at("09:00"), "Yen", 1),
    (at("10:45"), "Euro", 116),
    (at("11:15"), "Euro", 119),
    (at("11:49"), "Pounds", 108),
]


def test_temporal_table_function_join(senv: TableEnvironment, shared_dir: Path) -> None:
    """Each order converted at the rate valid at its time: 2 Euro at 10:15 is 228 (114)."""
    orders, rates = shared_dir / "Orders", shared_dir / "RatesHistory"
    write(orders, ("rowtime", "amount", "currency"), ORDERS_TTF)
    write(rates, ("rowtime", "currency", "rate"), RATES_HISTORY)
    senv.execute_sql(
        f"""CREATE TABLE Orders (rowtime TIMESTAMP(3), amount BIGINT, currency STRING,
        WATERMARK FOR rowtime AS rowtime) WITH ({files(orders)})"""
    )
    senv.execute_sql(
        f"""CREATE TABLE RatesHistory (rowtime TIMESTAMP(3), currency STRING, rate BIGINT,
        WATERMARK FOR rowtime AS rowtime) WITH ({files(rates)})"""
    )
    senv.create_temporary_function(
        "Rates",
        senv.from_path("RatesHistory").create_temporal_table_function(
            col("rowtime"), col("currency")
        ),
    )
    sql = """SELECT
  o.amount * r.rate AS amount
FROM
  Orders AS o,
  LATERAL TABLE (Rates(o.rowtime)) AS r
WHERE r.currency = o.currency"""
    result = senv.execute_sql(sql)
    assert {k for k, _ in changelog(result)} == {"+I"}
    assert as_bag(tuple(r) for r in result.collect()) == as_bag(
        [(2 * 114,), (1 * 102,), (50 * 1,), (3 * 116,), (5 * 102,)]
    )
    # the query without temporal tables needs a correlated scalar subquery: refused by name
    with pytest.raises(SqlValidationError, match="scalar subquery is not supported"):
        senv.execute_sql("""SELECT
  SUM(o.amount * r.rate) AS amount
FROM Orders AS o,
  RatesHistory AS r
WHERE r.currency = o.currency
AND r.rowtime = (
  SELECT MAX(rowtime)
  FROM RatesHistory AS r2
  WHERE r2.currency = o.currency
  AND r2.rowtime <= o.rowtime);""")


def test_processing_time_temporal_table_function_with_a_sum(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    """``SUM(o_amount * r_rate)`` over the latest rates (one version each: deterministic)."""
    orders, rates = shared_dir / "Orders", shared_dir / "RatesHistory"
    senv.execute_sql(
        f"""CREATE TABLE Orders (o_amount BIGINT, o_currency STRING, o_proctime AS PROCTIME())
        WITH ({files(orders, True)})"""
    )
    senv.execute_sql(
        f"""CREATE TABLE RatesHistory (r_currency STRING, r_rate BIGINT, r_rowtime TIMESTAMP(3))
        WITH ({files(rates, True)})"""
    )
    senv.create_temporary_function(
        "Rates",
        senv.from_path("RatesHistory").create_temporal_table_function(
            col("r_rowtime"), col("r_currency")
        ),
    )
    write(orders, ("o_amount", "o_currency"), [])
    write(rates, ("r_currency", "r_rate", "r_rowtime"), [])
    result = senv.execute_sql("""SELECT
  SUM(o_amount * r_rate) AS amount
FROM
  Orders,
  LATERAL TABLE (Rates(o_proctime))
WHERE
  r_currency = o_currency""")
    try:
        rate_rows = [("Euro", 114, at("09:00")), ("Yen", 1, at("09:00"))]
        write(rates, ("r_currency", "r_rate", "r_rowtime"), rate_rows, 1)
        result.process_all_available()
        write(orders, ("o_amount", "o_currency"), [(2, "Euro"), (50, "Yen"), (7, "USD")], 1)
        result.process_all_available()
        write(orders, ("o_amount", "o_currency"), [(3, "Euro")], 2)
        result.process_all_available()
        # one result change per joined order, in the file's order (Flink's per-record
        # aggregation; the USD order has no rate)
        assert changelog(result) == [
            ("+I", (2 * 114,)),
            ("-U", (2 * 114,)),
            ("+U", (2 * 114 + 50,)),
            ("-U", (2 * 114 + 50,)),
            ("+U", (5 * 114 + 50,)),
        ]
    finally:
        result.cancel()


def lookup_rates(path: Path, rows: Sequence[tuple[str, int]]) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS rates (currency TEXT, rate INTEGER)")
        conn.execute("DELETE FROM rates")
        conn.executemany("INSERT INTO rates VALUES (?, ?)", rows)
    conn.close()
    path.chmod(0o666)


def test_temporal_table_join_with_a_lookup_table(senv: TableEnvironment, shared_dir: Path):
    """The page's LatestRates example: each order joins the rate current when it arrives;
    the Euro rate changes from 114 to 116 before the third order (10:52)."""
    db = shared_dir / "rates.db"
    lookup_rates(db, [("US Dollar", 102), ("Euro", 114), ("Yen", 1)])
    orders = shared_dir / "Orders"
    senv.execute_sql(
        f"""CREATE TABLE Orders (amount BIGINT, currency STRING, proctime AS PROCTIME())
        WITH ({files(orders, True)})"""
    )
    senv.execute_sql(
        f"""CREATE TABLE LatestRates (currency STRING, rate BIGINT)
        WITH ('connector' = 'jdbc', 'url' = 'jdbc:sqlite:{db}', 'table-name' = 'rates')"""
    )
    write(orders, ("amount", "currency"), [])
    verbatim = """SELECT
  o.amout, o.currency, r.rate, o.amount * r.rate
FROM
  Orders AS o
  JOIN LatestRates FOR SYSTEM_TIME AS OF o.proctime AS r
  ON r.currency = o.currency"""
    # the page's query misspells o.amount: refused, pointing at it (Flink refuses it too)
    with pytest.raises(SqlValidationError) as error:
        senv.execute_sql(verbatim)
    assert (error.value.line, error.value.column) == (2, 3)
    assert "Column 'amout' not found in table 'o'" in str(error.value)
    assert "Did you mean 'amount'?" in str(error.value)
    result = senv.execute_sql(verbatim.replace("o.amout", "o.amount"))
    try:
        write(orders, ("amount", "currency"), [(2, "Euro")], 1)  # 10:15
        result.process_all_available()
        write(orders, ("amount", "currency"), [(1, "US Dollar")], 2)  # 10:30
        result.process_all_available()
        lookup_rates(db, [("US Dollar", 102), ("Euro", 116), ("Yen", 1)])  # changed to 116
        write(orders, ("amount", "currency"), [(2, "Euro")], 3)  # 10:52
        result.process_all_available()
        assert result.column_names == ("amount", "currency", "rate", "EXPR$3")
        assert changelog(result) == [
            ("+I", (2, "Euro", 114, 228)),
            ("+I", (1, "US Dollar", 102, 102)),
            ("+I", (2, "Euro", 116, 232)),
        ]
    finally:
        result.cancel()


def test_temporal_table_join_with_a_sum(senv: TableEnvironment, shared_dir: Path) -> None:
    db = shared_dir / "rates.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE rates (r_currency TEXT, r_rate INTEGER)")
        conn.executemany("INSERT INTO rates VALUES (?, ?)", [("Euro", 114), ("Yen", 1)])
    conn.close()
    db.chmod(0o666)
    orders = shared_dir / "Orders"
    write(orders, ("o_amount", "o_currency"), [(2, "Euro"), (50, "Yen"), (3, "Euro"), (1, "X")])
    senv.execute_sql(
        f"""CREATE TABLE Orders (o_amount BIGINT, o_currency STRING, o_proctime AS PROCTIME())
        WITH ({files(orders)})"""
    )
    senv.execute_sql(
        f"""CREATE TABLE LatestRates (r_currency STRING, r_rate BIGINT)
        WITH ('connector' = 'jdbc', 'url' = 'jdbc:sqlite:{db}', 'table-name' = 'rates')"""
    )
    result = senv.execute_sql("""SELECT
  SUM(o_amount * r_rate) AS amount
FROM
  Orders
  JOIN LatestRates FOR SYSTEM_TIME AS OF o_proctime
  ON r_currency = o_currency""")
    assert final(result) == as_bag([(2 * 114 + 50 + 3 * 114,)])
    assert changelog(result)[-1] == ("+U", (2 * 114 + 50 + 3 * 114,)) or changelog(result) == [
        ("+I", (2 * 114 + 50 + 3 * 114,))
    ]


# -- FLIP-204: the SHUFFLE_HASH hint of a lookup join (seed 003) --------------------------------


def test_flip204_hash_lookup_join(env: TableEnvironment, shared_dir: Path) -> None:
    db = shared_dir / "customers.db"
    customers = [(1, "NL", "1011"), (2, "DE", "10115"), (3, "FR", "75001")]
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER, country TEXT, zip TEXT)")
        conn.executemany("INSERT INTO customers VALUES (?, ?, ?)", customers)
    conn.close()
    db.chmod(0o666)
    order_rows = [(100, 9.5, 1), (101, 20.0, 2), (102, 3.25, 1), (103, 7.0, 4)]
    write(shared_dir / "Orders", ("order_id", "total", "customer_id"), order_rows)
    env.execute_sql(
        f"""CREATE TABLE Orders (order_id BIGINT, total DOUBLE, customer_id BIGINT,
        proc_time AS PROCTIME()) WITH ({files(shared_dir / "Orders")})"""
    )
    env.execute_sql(
        f"""CREATE TABLE Customers (id BIGINT, country STRING, zip STRING)
        WITH ('connector' = 'jdbc', 'url' = 'jdbc:sqlite:{db}', 'table-name' = 'customers',
              'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '100')"""
    )
    sql = """SELECT /*+ SHUFFLE_HASH('Customers') */ o.order_id, o.total, c.country, c.zip
FROM Orders AS o
JOIN Customers FOR SYSTEM_TIME AS OF o.proc_time AS c
ON o.customer_id = c.id;"""
    plan = env.sql_query(sql.rstrip(";")).explain()
    assert "Exchange(distribution=[hash[customer_id]])" in plan and "shuffle=[true]" in plan
    rows = env.execute_sql(sql).collect()
    by_id = {c[0]: c for c in customers}
    assert as_bag(tuple(r) for r in rows) == as_bag(
        [(o, t, by_id[c][1], by_id[c][2]) for o, t, c in order_rows if c in by_id]
    )
    # the name the FLIP rejected is no hint of Flink's: refused by name
    with pytest.raises(SqlValidationError, match="Unknown hint USE_HASH"):
        env.execute_sql(sql.replace("SHUFFLE_HASH", "USE_HASH"))


def test_flip204_spark_hint_example(env: TableEnvironment, shared_dir: Path) -> None:
    """The FLIP's Spark example of the hint, a regular join: Flink's names for both
    ``key`` columns (``key``, ``key0``)."""
    t1 = [(1, "a"), (2, "b"), (3, "c")]
    t2 = [(1, 10), (3, 30), (3, 31)]
    write(shared_dir / "t1", ("key", "v1"), t1)
    write(shared_dir / "t2", ("key", "v2"), t2)
    env.execute_sql(f"CREATE TABLE t1 (key INT, v1 STRING) WITH ({files(shared_dir / 't1')})")
    env.execute_sql(f"CREATE TABLE t2 (key INT, v2 INT) WITH ({files(shared_dir / 't2')})")
    sql = "SELECT /*+ SHUFFLE_HASH(t1) */ * FROM t1 INNER JOIN t2 ON t1.key = t2.key;"
    assert "hints=[[SHUFFLE_HASH left:t1]]" in env.sql_query(sql.rstrip(";")).explain()
    result = env.execute_sql(sql)
    assert result.column_names == ("key", "v1", "key0", "v2")
    expected = nested_loop_join(t1, t2, "inner", lambda a, b: a[0] == b[0])
    assert as_bag(tuple(r) for r in result.collect()) == as_bag(expected)


# -- FLIP-516: multi-way joins on a common key (seed 004) ---------------------------------------


@pytest.mark.parametrize(
    ("condition", "multi"),
    [
        ("A JOIN B ON A.key = B.key JOIN C ON A.key = C.key", True),
        ("A JOIN B ON A.key = B.key JOIN C ON B.key = C.key", True),  # by transitivity
        ("A JOIN B ON A.key1 = B.key1 JOIN C ON B.key2 = C.key2", False),  # no common key
    ],
)
def test_flip516_multi_way_joins(
    senv: TableEnvironment, shared_dir: Path, condition: str, multi: bool
) -> None:
    a = [(1, 1, "a1", "+I"), (2, 2, "a2", "+I"), (1, 1, "a1", "-D"), (1, 3, "a1'", "+I")]
    b = [(1, 1, 3, "b1", "+I"), (2, 2, 2, "b2", "+I"), (2, 2, 2, "b2", "-D")]
    c = [(1, 3, "c1", "+I"), (2, 2, "c2", "+I"), (3, 2, "c3", "+I")]
    write(shared_dir / "A", ("key", "key1", "va", "op"), a)
    write(shared_dir / "B", ("key", "key1", "key2", "vb", "op"), b)
    write(shared_dir / "C", ("key", "key2", "vc", "op"), c)
    cl = "'changelog.op-column' = 'op'"
    senv.execute_sql(
        f"CREATE TABLE A (key INT, key1 INT, va STRING) WITH ({files(shared_dir / 'A')}, {cl})"
    )
    senv.execute_sql(
        f"CREATE TABLE B (key INT, key1 INT, key2 INT, vb STRING) "
        f"WITH ({files(shared_dir / 'B')}, {cl})"
    )
    senv.execute_sql(
        f"CREATE TABLE C (key INT, key2 INT, vc STRING) WITH ({files(shared_dir / 'C')}, {cl})"
    )
    senv.execute_sql("SET 'table.optimizer.multi-join.enabled' = 'true'")
    sql = f"SELECT * FROM {condition}"
    assert ("MultiJoin(" in senv.sql_query(sql).explain()) is multi
    result = senv.execute_sql(sql)

    def live(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return [tuple(r[:-1]) for r in apply_changelog_rows(rows)]

    left, mid, right = live(a), live(b), live(c)
    if "key1" in condition:
        ab = [x + y for x in left for y in mid if x[1] == y[1]]
        expected = [xy + z for xy in ab for z in right if xy[5] == z[1]]
    else:
        ab = [x + y for x in left for y in mid if x[0] == y[0]]
        expected = [xy + z for xy in ab for z in right if xy[0] == z[0]]
    assert final(result) == as_bag(expected)
    assert {k for k, _ in changelog(result)} <= {"+I", "-D", "-U", "+U"}


def apply_changelog_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """A changelog whose last field is the kind, applied (a plain-Python table)."""
    counts: Counter[tuple[Any, ...]] = Counter()
    for r in rows:
        counts[r[:-1]] += 1 if r[-1] in ("+I", "+U") else -1
    return [(*r, "+I") for r, n in counts.items() for _ in range(n)]
