"""Lookup joins through the Table API on the real server, against real SQLite and real
PostgreSQL (tests/postgres.py): every rule of docs/lookup-joins.md section 3, in batch
and streaming mode, each result compared with the same join computed in plain Python
(``reference_join``); streaming results also by their changelog (row kinds). Then the
caches (NONE / PARTIAL / FULL, a row inserted after a miss), the LOOKUP hint's retry, a
database that is down, and the metrics."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tableapi import TableDescriptor, TableEnvironment, col, lit
from tableapi.errors import ValidationError
from tableapi.result import apply_changelog
from tableapi.schema import Schema
from tests.integration.changelog_files import ChangelogTable
from tests.integration.errors import from_the_server
from tests.postgres import PostgresServer
from tests.servers import TestServer
from tests.unit.lookup.helpers import Dim, by_value, reference_join

DIM_COLS = (("id", "BIGINT"), ("name", "STRING"), ("age", "INT"), ("country", "STRING"))
# ids 0..58 by 2, id 4 twice (1:N), a row whose key is NULL (never matched)
DIM_ROWS = [(i, f"c{i}", 20 + i % 37, "NL" if i % 3 else "DE") for i in range(0, 60, 2)]
DIM_ROWS += [(4, "c4bis", 70, "NL"), (None, "nokey", 30, "NL")]
PROBE_COLS = (("order_id", "BIGINT"), ("customer_id", "BIGINT"), ("c_name", "STRING"),
              ("amount", "INT"))  # fmt: skip
PROBE_ROWS = [
    (i, None if i % 13 == 0 else (i * 7) % 70, f"c{(i * 7) % 70}" if i % 4 else "x", i % 50)
    for i in range(1, 241)
]
OUT = ("order_id", "customer_id", "c_name", "amount", "id", "name", "age", "country",
       "nominal_age")  # fmt: skip


def extended(rows: list[tuple]) -> list[tuple]:
    """The dimension rows with their computed column ``nominal_age AS age + 1``."""
    return [(*r, None if r[2] is None else r[2] + 1) for r in rows]


@pytest.fixture(params=["sqlite", "postgresql"])
def dim(request: pytest.FixtureRequest, shared_dir: Path, test_server: TestServer) -> Dim:
    """The dimension table, in a database the server's workers reach."""
    pg: PostgresServer | None = None
    if request.param == "postgresql":
        pg = request.getfixturevalue("postgres")
        if pg.address_from(test_server.kind) is None:
            pytest.skip(f"a {test_server.kind} server cannot reach the {pg.kind} PostgreSQL")
    d = Dim(request.param, pg, shared_dir)
    d.name = f"customers_{uuid.uuid4().hex[:8]}"
    d.path = str(shared_dir / f"{d.name}.db")
    d.create(DIM_COLS, DIM_ROWS)
    if request.param == "sqlite":
        Path(d.path).chmod(0o666)
    d.server_kind = test_server.kind  # type: ignore[attr-defined]
    return d


def register_dim(
    env: TableEnvironment,
    d: Dim,
    name: str = "Customers",
    schema: Schema | None = None,
    **options: str,
) -> None:
    if schema is None:
        builder = Schema.new_builder()
        for n, t in DIM_COLS:
            builder.column(n, t)
        schema = builder.column_by_expression("nominal_age", "age + 1").build()
    descriptor = TableDescriptor.for_connector("jdbc").schema(schema).option("table-name", d.name)
    if d.backend == "sqlite":
        descriptor.option("url", f"jdbc:sqlite:{d.path}")
    else:
        assert d.pg is not None
        address = d.pg.address_from(d.server_kind)  # type: ignore[attr-defined]
        assert address is not None
        host, port = address
        descriptor.option("url", f"jdbc:postgresql://{host}:{port}/{d.pg.database}")
        descriptor.option("username", d.pg.user).option("password", d.pg.password)
    for k, v in options.items():
        descriptor.option(k, v)
    env.create_temporary_table(name, descriptor.build())


@pytest.fixture(params=["batch", "streaming"])
def any_env(request: pytest.FixtureRequest, server_url: str) -> Iterator[TableEnvironment]:
    environment = TableEnvironment.create(mode=request.param, remote=server_url)
    yield environment
    for query in environment.spark.streams.active:
        query.stop()
    environment.close()


def probe_table(
    env: TableEnvironment, root: Path, changelog: bool = False, bounded: bool = True
) -> ChangelogTable:
    return ChangelogTable(
        env,
        root,
        "Orders",
        PROBE_COLS,
        primary_key=("order_id",) if changelog else (),
        op_column="op" if changelog else None,
        computed=[("o_proctime", "PROCTIME()")],
        bounded=bounded,
    )


def run(table: Any) -> tuple[list[tuple], Counter, dict[str, int]]:
    """Rows, the changelog (kind, row) and the lookup metrics of a finished query."""
    result = table.execute()
    rows = result.collect()
    changelog = Counter((r.kind.short_string, tuple(r)) for r in rows)
    return [tuple(r) for r in rows], changelog, result.lookup_metrics()["Customers"]


Case = tuple[Any, str, list, Callable, Callable, Callable]
# (condition, kind, reference keys [(probe index | None, dim index, constant)],
#  dimension predicate, pre-filter, residual); dimension rows are ``extended``.
CASES: dict[str, Case] = {
    "inner": (col("customer_id") == col("id"), "inner", [(1, 0, None)],
              lambda d: True, lambda p: True, lambda p, d: True),
    "left": (col("customer_id") == col("id"), "left", [(1, 0, None)],
             lambda d: True, lambda p: True, lambda p, d: True),
    "constant key": ((col("customer_id") == col("id")) & (col("country") == lit("NL")), "left",
                     [(1, 0, None), (None, 3, "NL")],
                     lambda d: True, lambda p: True, lambda p, d: True),
    "multi keys": ((col("c_name") == col("name")) & (col("customer_id") == col("id")), "inner",
                   [(2, 1, None), (1, 0, None)],
                   lambda d: True, lambda p: True, lambda p, d: True),
    "expression key": (((col("order_id") % 40) * 2 == col("id")), "left",
                       [(None, 0, None)],  # replaced below: the probe key is computed
                       lambda d: True, lambda p: True, lambda p, d: True),
    "filters left": (
        (col("customer_id") == col("id")) & (col("nominal_age") > 30) & (col("amount") > 9)
        & (col("amount") > col("age") - 30),
        "left", [(1, 0, None)],
        lambda d: d[4] is not None and d[4] > 30, lambda p: p[3] > 9,
        lambda p, d: p[3] > d[2] - 30),
    "filters inner": (
        (col("customer_id") == col("id")) & (col("nominal_age") > 30) & (col("amount") > 9)
        & (col("amount") > col("age") - 30),
        "inner", [(1, 0, None)],
        lambda d: d[4] is not None and d[4] > 30, lambda p: p[3] > 9,
        lambda p, d: p[3] > d[2] - 30),
}  # fmt: skip


def expected_rows(name: str, probe: list[tuple]) -> list[tuple]:
    _condition, kind, keys, dim_pred, pre, residual = CASES[name]
    if name == "expression key":  # the key (order_id % 40) * 2 as an extra probe column
        widened = [(*p, p[0] % 40 * 2) for p in probe]
        rows = reference_join(kind, widened, extended(DIM_ROWS), [(4, 0, None)])
        return [r[:4] + r[5:] for r in rows]
    return reference_join(kind, probe, extended(DIM_ROWS), keys, dim_pred, pre, residual)


@pytest.mark.parametrize("case", list(CASES))
def test_section_3_rules(any_env: TableEnvironment, dim: Dim, shared_dir: Path, case: str) -> None:
    register_dim(any_env, dim, **{"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "20"})
    orders = probe_table(any_env, shared_dir)
    orders.append([("+I", r) for r in PROBE_ROWS])
    condition, kind = CASES[case][0], CASES[case][1]
    query = (
        any_env.from_path("Orders")
        .temporal_join(any_env.from_path("Customers"), condition, as_of=col("o_proctime"), how=kind)
        .select(*(col(n) for n in OUT))
    )
    rows, changelog, metrics = run(query)
    want = expected_rows(case, PROBE_ROWS)
    assert by_value(rows) == by_value(want)
    assert set(changelog) == {("+I", r) for r in want}  # an insert-only probe: +I only
    assert any(r[4] is None for r in want) == (kind == "left")  # the data exercises padding
    # Flink's counting: one lookup per probe row with a non-NULL key that passes the pre-filter
    looked_up = metrics["hitCount"] + metrics["missCount"]
    assert 0 < metrics["numQueries"] <= metrics["loadCount"] == metrics["missCount"] <= looked_up
    assert metrics["numLoadFailures"] == 0 and metrics["latestLoadTime"] >= 0
    if case in ("inner", "left", "filters left", "filters inner"):
        pre = CASES[case][4]
        assert looked_up == sum(1 for p in PROBE_ROWS if p[1] is not None and pre(p))


def test_hash_lookup_join_gives_the_same_rows(any_env: TableEnvironment, dim: Dim,
                                              shared_dir: Path) -> None:  # fmt: skip
    register_dim(any_env, dim, **{"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "5"})
    orders = probe_table(any_env, shared_dir)
    orders.append([("+I", r) for r in PROBE_ROWS])
    base = any_env.from_path("Orders").temporal_join(
        any_env.from_path("Customers"), col("customer_id") == col("id"),
        as_of=col("o_proctime"), how="left",
    ).select(*(col(n) for n in OUT))  # fmt: skip
    hashed = base.with_hint("SHUFFLE_HASH", "Customers")
    assert "Exchange(distribution=[hash[customer_id]]" in hashed.explain()
    rows, _, metrics = run(hashed)
    assert by_value(rows) == by_value(expected_rows("left", PROBE_ROWS))
    assert metrics["hitCount"] + metrics["missCount"] == sum(
        1 for p in PROBE_ROWS if p[1] is not None
    )


@pytest.mark.parametrize("kind", ["inner", "left"])
def test_computed_columns_any_expression_after_the_join(
    any_env: TableEnvironment, dim: Dim, shared_dir: Path, kind: str
) -> None:
    """Computed columns the condition does not read (CAST, CONCAT, COALESCE) are computed
    after the join (conformance difference 8: they were refused); a padded row has NULL in
    them, as in every other column of the lookup table (COALESCE gives no '-' there)."""
    schema = Schema.new_builder()
    for n, t in DIM_COLS:
        schema.column(n, t)
    schema.column_by_expression("label", "CONCAT(name, '/', CAST(age AS STRING))")
    schema.column_by_expression("tag", "COALESCE(country, '-')")
    register_dim(any_env, dim, name="Labels", schema=schema.build())
    orders = probe_table(any_env, shared_dir)
    orders.append([("+I", r) for r in PROBE_ROWS])
    query = any_env.from_path("Orders").temporal_join(
        any_env.from_path("Labels"), col("customer_id") == col("id"),
        as_of=col("o_proctime"), how=kind,
    ).select(col("order_id"), col("id"), col("label"), col("tag"))  # fmt: skip
    result = query.execute()
    rows = result.collect()
    dims = [(*d, f"{d[1]}/{d[2]}", d[3] or "-") for d in DIM_ROWS]
    joined = reference_join(kind, PROBE_ROWS, dims, [(1, 0, None)])
    want = [(r[0], r[4], r[8], r[9]) for r in joined]
    assert by_value([tuple(r) for r in rows]) == by_value(want)
    assert Counter(r.kind.short_string for r in rows) == {"+I": len(want)}
    assert any(w[1] is None for w in want) == (kind == "left")  # padded rows are in the data
    assert result.lookup_metrics()["Labels"]["missCount"] > 0


def test_changelog_probe_keeps_its_row_kinds(senv: TableEnvironment, dim: Dim,
                                             shared_dir: Path) -> None:  # fmt: skip
    """A changelog probe (inserts, updates that change the key, deletes): each output row
    has its probe row's kind; hashing on the upsert key keeps each row's changes in order."""
    register_dim(senv, dim)
    orders = probe_table(senv, shared_dir, changelog=True)
    first = PROBE_ROWS[:60]
    changes = [("+I", r) for r in first]
    for r in first[:20]:  # updates move the order to another customer (its lookup key)
        changes += [("-U", r), ("+U", (r[0], (r[1] or 0) + 2, r[2], r[3]))]
    changes += [("-D", r) for r in first[40:50]]
    orders.append(changes)
    query = senv.from_path("Orders").temporal_join(
        senv.from_path("Customers"), col("customer_id") == col("id"),
        as_of=col("o_proctime"), how="left",
    ).select(*(col(n) for n in OUT)).with_hint("SHUFFLE_HASH", "Customers")  # fmt: skip
    with pytest.raises(ValidationError, match="upsert key contains the lookup keys"):
        query.explain()
    by_order = senv.from_path("Orders").temporal_join(
        senv.from_path("Customers"), (col("customer_id") == col("id")),
        as_of=col("o_proctime"), how="left",
    ).select(*(col(n) for n in OUT))  # fmt: skip
    _, changelog, _ = run(by_order)
    want: Counter = Counter()
    for op, row in changes:
        for out in reference_join("left", [row], extended(DIM_ROWS), [(1, 0, None)]):
            want[(op, out)] += 1
    assert changelog == want
    # the changelog applied is the join of the final table
    final = reference_join("left", orders.current(), extended(DIM_ROWS), [(1, 0, None)])
    result = by_order.execute()
    assert by_value(apply_changelog(result.collect())) == by_value(final)


# -- caches -------------------------------------------------------------------------------------


def _late_row_run(senv: TableEnvironment, dim: Dim, shared_dir: Path, **cache: str) -> list:
    """Probe key 900 (absent) in the first micro-batch, in several files (so several tasks:
    every Python worker of the server sees the miss), then insert id 900 into the database,
    then probe 900 again: what the second micro-batch's rows show."""
    senv.spark.conf.set("spark.sql.files.openCostInBytes", str(128 << 20))  # a task per file
    register_dim(senv, dim, **cache)
    orders = probe_table(senv, shared_dir, bounded=False)
    for i in range(4):
        orders.append([("+I", (i, 900, "x", 1))])
    query = senv.from_path("Orders").temporal_join(
        senv.from_path("Customers"), col("customer_id") == col("id"),
        as_of=col("o_proctime"), how="left",
    ).select(col("order_id"), col("name"))  # fmt: skip
    result = query.execute()
    try:
        result.process_all_available()
        first = [tuple(r) for r in result.collect()]
        assert by_value(first) == [(i, None) for i in range(4)]
        dim.insert([(900, "late", 40, "NL")])
        orders.append([("+I", (10, 900, "x", 1))])
        result.process_all_available()
        second = [tuple(r) for r in result.collect() if r[0] == 10]
        metrics = result.lookup_metrics()["Customers"]
    finally:
        result.cancel()
    assert metrics["hitCount"] + metrics["missCount"] == 5
    return second


def test_none_cache_sees_a_row_inserted_after_a_miss(senv, dim, shared_dir) -> None:  # type: ignore[no-untyped-def]
    assert _late_row_run(senv, dim, shared_dir) == [(10, "late")]


def test_partial_cache_keeps_a_cached_miss(senv, dim, shared_dir) -> None:  # type: ignore[no-untyped-def]
    partial = {"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "100"}
    assert _late_row_run(senv, dim, shared_dir, **partial) == [(10, None)]


def test_partial_cache_without_missing_keys_asks_again(senv, dim, shared_dir) -> None:  # type: ignore[no-untyped-def]
    partial = {
        "lookup.cache": "PARTIAL",
        "lookup.partial-cache.expire-after-write": "1 h",
        "lookup.partial-cache.cache-missing-key": "false",
    }
    assert _late_row_run(senv, dim, shared_dir, **partial) == [(10, "late")]


def test_full_cache_serves_its_snapshot(senv, dim, shared_dir) -> None:  # type: ignore[no-untyped-def]
    full = {"lookup.cache": "FULL", "lookup.full-cache.periodic-reload.interval": "1 h"}
    assert _late_row_run(senv, dim, shared_dir, **full) == [(10, None)]


def test_full_cache_rows_and_metrics(env: TableEnvironment, dim: Dim, shared_dir: Path) -> None:
    register_dim(env, dim, **{"lookup.cache": "FULL",
                              "lookup.full-cache.periodic-reload.interval": "1 h"})  # fmt: skip
    orders = probe_table(env, shared_dir)
    orders.append([("+I", r) for r in PROBE_ROWS])
    query = env.from_path("Orders").temporal_join(
        env.from_path("Customers"), (col("customer_id") == col("id")) & (col("age") > 30),
        as_of=col("o_proctime"),
    ).select(*(col(n) for n in OUT))  # fmt: skip
    rows, _, metrics = run(query)
    assert by_value(rows) == by_value(
        reference_join(
            "inner", PROBE_ROWS, extended(DIM_ROWS), [(1, 0, None)], dim_pred=lambda d: d[2] > 30
        )
    )
    # a FULL cache serves every lookup: no miss; one load (a query) per worker
    assert metrics["missCount"] == 0 and metrics["hitCount"] == sum(
        1 for p in PROBE_ROWS if p[1] is not None
    )
    assert 1 <= metrics["loadCount"] == metrics["numQueries"] <= 2
    assert metrics["numCachedRecords"] > 0


# -- retries and faults -------------------------------------------------------------------------


def test_lookup_hint_retries_a_miss_until_the_row_comes(env: TableEnvironment, dim: Dim,
                                                         shared_dir: Path) -> None:  # fmt: skip
    """FLIP-234: a key missing at the first lookup is looked up again after ``fixed-delay``;
    the row inserted meanwhile is joined."""
    register_dim(env, dim)
    orders = probe_table(env, shared_dir)
    orders.append([("+I", (1, 901, "x", 1)), ("+I", (2, 2, "x", 1))])
    query = env.from_path("Orders").temporal_join(
        env.from_path("Customers"), col("customer_id") == col("id"), as_of=col("o_proctime"),
    ).select(col("order_id"), col("name")).with_hint("LOOKUP", **{
        "table": "Customers", "retry-predicate": "lookup_miss", "retry-strategy": "fixed_delay",
        "fixed-delay": "200 ms", "max-attempts": "100"})  # fmt: skip
    timer = threading.Timer(5.0, lambda: dim.insert([(901, "arrived", 33, "NL")]))
    timer.start()
    try:
        rows, _, metrics = run(query)
    finally:
        timer.join()
    assert by_value(rows) == [(1, "arrived"), (2, "c2")]
    assert metrics["loadCount"] > metrics["missCount"]  # the retries fetched again


def test_a_database_that_is_down_fails_the_query(env: TableEnvironment, dim: Dim,
                                                 shared_dir: Path) -> None:  # fmt: skip
    """When the database stays down, the query fails naming the lookup table and the
    database, after lookup.max-retries; no row is emitted as if its key were missing."""
    if dim.backend == "postgresql" and not (dim.pg and dim.pg.can_restart):
        pytest.skip("this PostgreSQL cannot be stopped and started")
    register_dim(env, dim, **{"lookup.max-retries": "1"})
    orders = probe_table(env, shared_dir)
    orders.append([("+I", r) for r in PROBE_ROWS[:20]])
    query = env.from_path("Orders").temporal_join(
        env.from_path("Customers"), col("customer_id") == col("id"),
        as_of=col("o_proctime"), how="left",
    ).select(col("order_id"), col("name"))  # fmt: skip
    moved = Path(dim.path + ".away")
    if dim.backend == "sqlite":
        Path(dim.path).rename(moved)
    else:
        assert dim.pg is not None
        dim.pg.stop_server()
    try:
        result = query.execute()
        with pytest.raises(Exception) as failure:
            result.collect()
        text = str(failure.value)
        assert "Lookup table 'Customers'" in text and "unreachable" in text
        assert (dim.name in text) and ("2 attempts failed" in text)
    finally:
        if dim.backend == "sqlite":
            moved.rename(dim.path)
        else:
            assert dim.pg is not None
            dim.pg.start_server()
    # back up: the same query runs (a lost connection is re-opened)
    rows, _, _ = run(query)
    assert len(rows) == len(reference_join("left", PROBE_ROWS[:20], DIM_ROWS, [(1, 0, None)]))


def test_plan_time_errors_before_any_job(env: TableEnvironment, dim: Dim, shared_dir: Path) -> None:
    register_dim(env, dim)
    orders = probe_table(env, shared_dir)
    orders.append([("+I", PROBE_ROWS[0])])
    o, c = env.from_path("Orders"), env.from_path("Customers")
    with pytest.raises(ValidationError, match="requires an equality condition"):
        o.temporal_join(c, col("amount") > col("age"), as_of=col("o_proctime"))
    with pytest.raises(ValidationError, match="implicit type conversion between VARCHAR"):
        o.temporal_join(c, col("c_name") == col("id"), as_of=col("o_proctime"))
    with pytest.raises(ValidationError, match="never scanned"):
        c.select(col("id")).execute()
    with pytest.raises(ValidationError, match="Could not parse value 'yes' for key 'async'") as e:
        o.temporal_join(c, col("customer_id") == col("id"), as_of=col("o_proctime")).with_hint(
            "LOOKUP", table="Customers", **{"async": "yes"}
        )
    assert not from_the_server(e.value)  # refused at plan time, by the client
