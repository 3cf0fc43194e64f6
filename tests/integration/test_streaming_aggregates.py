"""Streaming group aggregation on a real server (issue 21): the JVM GroupAggregate operator over
changelog tables, join outputs (an outer join's retractions), another aggregation, and
insert-only tables; global aggregates, distinct() and HAVING.

After every micro-batch the materialized result must equal the aggregate of the inputs'
current contents, computed in plain Python; and the changelog must be one Flink could emit:
every -U/-D retracts a row that is there, and a group key's changes run +I, then (-U, +U)
pairs, then -D (or a filter's subset of them).
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tableapi import Table, TableEnvironment, col, lit
from tableapi.result import Row, RowKind
from tests.integration.changelog_files import Change, ChangelogTable
from tests.integration.processing_time import wait_past, within_ttl
from tests.reference import eq, nested_loop_join

ORDER_COLUMNS = [("order_id", "BIGINT"), ("product_id", "BIGINT"), ("amount", "INT")]
PRODUCT_COLUMNS = [("id", "BIGINT"), ("category", "STRING")]

# Orders and products over four micro-batches: inserts, updates (-U/+U, one moves an order to
# another product), deletes, a product deleted and one that changes its category, a group
# retracted to nothing and back, NULL amounts and a NULL product.
SCRIPT: list[tuple[list[Change], list[Change]]] = [
    (
        [("+I", (1, 10, 3)), ("+I", (2, 11, 5)), ("+I", (3, None, 1)), ("+I", (4, 10, None))],
        [("+I", (10, "fruit")), ("+I", (11, "veg"))],
    ),
    (
        [("+I", (5, 12, 8)), ("-U", (2, 11, 5)), ("+U", (2, 10, 6)), ("+I", (6, 10, 3))],
        [("+I", (12, "fruit"))],
    ),
    (
        [("-D", (1, 10, 3)), ("-D", (3, None, 1)), ("+I", (7, 11, 2))],
        [("-U", (11, "veg")), ("+U", (11, "nuts")), ("-D", (12, "fruit"))],
    ),
    ([("-D", (7, 11, 2)), ("+I", (8, 13, 4)), ("-D", (6, 10, 3))], [("+I", (13, "veg"))]),
]


def check_changelog(rows: Sequence[Row], key_width: int, filtered: bool = False) -> Counter:
    """The changelog applied, once every change is one Flink could emit: a -U/-D retracts a
    row that is there; per group key (the first ``key_width`` columns) +I starts it, -U is
    followed by +U, at most one row is there at a time (``filtered``: a filter above the
    aggregate drops some of a key's changes, so only the first rule holds)."""
    there: Counter = Counter()
    state: dict[tuple, str] = {}  # per key: "none" | "row" | "retracted" (after a -U)
    for i, r in enumerate(rows):
        row, key, kind = tuple(r), tuple(r)[:key_width], r.kind
        if kind in (RowKind.UPDATE_BEFORE, RowKind.DELETE):
            assert there[row] > 0, f"change {i} {r} retracts a row that is not there"
            there[row] -= 1
        else:
            there[row] += 1
        if filtered:
            continue
        was = state.get(key, "none")
        expected = {
            RowKind.INSERT: "none",
            RowKind.UPDATE_BEFORE: "row",
            RowKind.UPDATE_AFTER: "retracted",
            RowKind.DELETE: "row",
        }[kind]
        assert was == expected, f"change {i} {r}: key {key} was {was}\n{rows}"
        state[key] = {RowKind.UPDATE_BEFORE: "retracted", RowKind.DELETE: "none"}.get(kind, "row")
    assert all(s != "retracted" for s in state.values()), "a -U without its +U"
    return +there


def materialized(result: Any) -> Counter:
    """The result table now, NULLs as None (pandas gives NaN)."""
    frame = result.materialize()
    return Counter(
        tuple(None if isinstance(v, float) and math.isnan(v) else v for v in row)
        for row in frame.itertuples(index=False, name=None)
    )


def group(rows: Sequence[tuple], key: Callable[[tuple], Any]) -> dict[Any, list[tuple]]:
    groups: dict[Any, list[tuple]] = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    return groups


def avg_int(values: list[int]) -> int | None:
    """Flink's AVG of an INT column: the sum divided by the count, truncated toward zero."""
    if not values:
        return None
    total = sum(values)
    return abs(total) // len(values) * (1 if total >= 0 else -1)


def run_script(result: Any, tables: Sequence[ChangelogTable], script: Sequence, want: Any) -> None:
    """Each step's changes appended, then the result compared with ``want()``."""
    for step, changes in enumerate(script):
        for table, change in zip(tables, changes, strict=True):
            table.append(change)
        result.process_all_available()
        got = materialized(result)
        assert got == Counter(want()), f"after step {step}\n" + "\n".join(
            map(repr, result.collect())
        )


def test_group_aggregate_over_a_changelog_table(senv: TableEnvironment, shared_dir: Path) -> None:
    """Every function and the DISTINCT forms, per product, over an orders changelog: the
    changelog is Flink's (+I first, -U/+U on change, -D when a product's last order goes)."""
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS, ("order_id",))
    query = (
        senv.from_path("Orders")
        .group_by(col("product_id"))
        .select(
            col("product_id"),
            col("amount").sum.alias("total"),
            lit(1).count.alias("n"),
            col("amount").count.alias("amounts"),
            col("amount").avg.alias("mean"),
            col("amount").min.alias("lo"),
            col("amount").max.alias("hi"),
            col("amount").count.distinct.alias("distinct_amounts"),
            col("amount").sum.distinct.alias("distinct_total"),
        )
    )
    assert [str(f.type) for f in query.row_type][1:3] == ["INT", "BIGINT NOT NULL"]
    plan = query.explain()
    assert "GroupAggregate(groupBy=[product_id]" in plan and "group aggregate]" in plan

    def want() -> list[tuple]:
        out = []
        for product, rows in group(orders.current(), lambda r: r[1]).items():
            amounts = [r[2] for r in rows if r[2] is not None]
            distinct = sorted(set(amounts))
            out.append(
                (product, sum(amounts) if amounts else None, len(rows), len(amounts),
                 avg_int(amounts), min(amounts, default=None), max(amounts, default=None),
                 len(distinct), sum(distinct) if distinct else None)
            )  # fmt: skip
        return out

    result = query.execute()
    try:
        run_script(result, [orders], [[o] for o, _ in SCRIPT], want)
        changelog = result.collect()
        assert check_changelog(changelog, 1) == materialized(result)
        kinds = {r.kind for r in changelog}
        assert kinds == {
            RowKind.INSERT,
            RowKind.UPDATE_BEFORE,
            RowKind.UPDATE_AFTER,
            RowKind.DELETE,
        }
    finally:
        result.cancel()


def test_join_then_aggregate_then_join(senv: TableEnvironment, shared_dir: Path) -> None:
    """Revenue per category over orders LEFT JOIN products (both changing: the outer join's
    null-padded rows come and go), HAVING on the aggregate, then joined with a category
    table: the aggregate's output is an upsert stream keyed by the category."""
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS, ("order_id",))
    products = ChangelogTable(senv, shared_dir, "Product", PRODUCT_COLUMNS, ("id",))
    labels = ChangelogTable(senv, shared_dir, "Labels", [("c", "STRING"), ("label", "STRING")])
    labels.append([("+I", ("fruit", "F")), ("+I", ("veg", "V")), ("+I", (None, "none"))])
    revenue = (
        senv.from_path("Orders")
        .left_outer_join(senv.from_path("Product"), col("product_id") == col("id"))
        .group_by(col("category"))
        .select(
            col("category"),
            col("amount").sum.alias("total"),
            col("order_id").count.alias("orders"),
        )
    )
    query: Table = revenue.where(col("orders") > 1).join(
        senv.from_path("Labels"), col("category") == col("c")
    )
    plan = query.explain()
    assert "leftInputSpec=[JoinKeyContainsUniqueKey]" in plan
    assert "GroupAggregate(groupBy=[category], select=[category, SUM(amount)" in plan

    def revenue_now() -> list[tuple]:
        joined = nested_loop_join(
            orders.current(), products.current(), "left", lambda o, p: eq(o[1], p[0]), (3, 2)
        )
        out = []
        for category, rows in group(joined, lambda r: r[4]).items():
            amounts = [r[2] for r in rows if r[2] is not None]
            out.append((category, sum(amounts) if amounts else None, len(rows)))
        return out

    def want() -> list[tuple]:
        return [
            (*r, c, label)
            for r in revenue_now()
            if r[2] > 1
            for c, label in labels.current()
            if eq(r[0], c)
        ]

    both, only = revenue.execute(), query.execute()
    try:
        for step, (o, p) in enumerate(SCRIPT):
            orders.append(o)
            products.append(p)
            both.process_all_available()
            only.process_all_available()
            assert materialized(both) == Counter(revenue_now()), f"revenue after step {step}"
            assert materialized(only) == Counter(want()), f"joined after step {step}"
        assert check_changelog(both.collect(), 1) == materialized(both)
        check_changelog(only.collect(), 1, filtered=True)
    finally:
        both.cancel()
        only.cancel()


def test_global_distinct_and_aggregate_of_an_aggregate(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    """Over an insert-only table: a global aggregate (no row until the first input row, as
    Flink's), distinct() (+I per new row, nothing for a repeat), and an aggregate of an
    aggregate (how many products have n orders: its input retracts as counts move)."""
    events = ChangelogTable(senv, shared_dir, "Events", ORDER_COLUMNS, op_column=None)
    table = senv.from_path("Events")
    total = table.select(col("amount").sum.alias("s"), lit(1).count.alias("n"))
    distinct = table.select(col("product_id")).distinct()
    per_product = table.group_by(col("product_id")).select(
        col("product_id"), lit(1).count.alias("n")
    )
    histogram = per_product.group_by(col("n")).select(col("n"), lit(1).count.alias("products"))
    results = [q.execute() for q in (total, distinct, histogram)]
    batches = [
        [("+I", (1, 10, 3)), ("+I", (2, 11, None))],
        [("+I", (3, 10, 4)), ("+I", (4, 12, 1)), ("+I", (5, 10, 2))],
        [("+I", (6, 11, 7))],
    ]
    try:
        for r in results:
            r.process_all_available()
        assert results[0].collect() == []  # no input row yet: no global result
        for batch in batches:
            events.append(batch)
            for r in results:
                r.process_all_available()
            rows = events.current()
            amounts = [r[2] for r in rows if r[2] is not None]
            assert materialized(results[0]) == Counter([(sum(amounts), len(rows))])
            assert materialized(results[1]) == Counter({(r[1],) for r in rows})
            counts = Counter(r[1] for r in rows)
            assert materialized(results[2]) == Counter(Counter(counts.values()).items())
        check_changelog(results[0].collect(), 0)
        assert {r.kind for r in results[1].collect()} == {RowKind.INSERT}
        histogram_log = results[2].collect()
        assert check_changelog(histogram_log, 1) == materialized(results[2])
        assert RowKind.DELETE in {r.kind for r in histogram_log}  # n=1 emptied as counts grow
    finally:
        for r in results:
            r.cancel()


def test_batch_mode_gives_the_same_types_and_values(
    env: TableEnvironment, senv: TableEnvironment, shared_dir: Path
) -> None:
    """Batch mode (Spark's aggregate) and streaming mode (the operator, a bounded table run to
    its end) agree, with Flink's types: AVG of an INT is an INT truncated toward zero (-3 / 2
    is -1), SUM keeps INT, the DISTINCT forms count each value once, AVG of a DECIMAL(10, 2)
    is a DECIMAL(38, 6)."""
    columns = [*ORDER_COLUMNS, ("price", "DECIMAL(10, 2)")]
    rows = [(1, 10, -1, "1.25"), (2, 10, -2, "2.50"), (3, 10, -2, None), (4, 11, None, "0.10")]
    for e in (env, senv):
        table = ChangelogTable(e, shared_dir, "T", columns, op_column=None, bounded=True)
        if e is env:
            table.append([("+I", r) for r in rows])
    queries = [
        e.from_path("T")
        .group_by(col("product_id"))
        .select(
            col("product_id"),
            col("amount").avg.alias("mean"),
            col("amount").sum.alias("total"),
            col("amount").count.distinct.alias("d"),
            col("amount").sum.distinct.alias("ds"),
            col("price").avg.alias("p"),
        )
        for e in (env, senv)
    ]
    for q in queries:
        assert [str(f.type) for f in q.row_type][1:] == [
            "INT", "INT", "BIGINT NOT NULL", "INT", "DECIMAL(38, 6)"
        ]  # fmt: skip
    results = [q.execute() for q in queries]
    results[1].process_all_available()
    batch, streaming = (materialized(r) for r in results)

    want = Counter([(10, -1, -5, 2, -3, Decimal("1.875000")), (11, None, None, 0, None,
                                                                 Decimal("0.100000"))])  # fmt: skip
    assert batch == streaming == want


def test_state_ttl_forgets_a_key_as_flink_does(senv: TableEnvironment, shared_dir: Path) -> None:
    """STATE_TTL on the table an aggregation reads: within the TTL an unchanged result is
    emitted again (-U/+U, as Flink does with state TTL), and a key not written for longer is
    forgotten: its next row starts it afresh (+I), the old result is not retracted. (Times
    are the engine's processing time: tests/integration/processing_time.py.)"""
    ttl_s = 5
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS, ("order_id",))
    query = (
        senv.from_path("Orders")
        .group_by(col("product_id"))
        .select(col("product_id"), col("amount").sum.alias("total"))
        .with_hint("STATE_TTL", Orders=f"{ttl_s} s")
    )
    assert f"stateTtl=[{ttl_s * 1000} ms]" in query.explain()
    result = query.execute()
    try:
        orders.append([("+I", (0, 99, 1))])  # a first batch starts the query
        result.process_all_available()

        def rewritten(attempt: int) -> None:  # product 10 + attempt, then its sum again
            product = 10 + attempt
            for changes in (
                [("+I", (2 * product, product, 5))],
                [("+I", (2 * product + 1, product, 0))],
            ):
                orders.append(changes)
                result.process_all_available()

        attempt, ran_by = within_ttl(ttl_s, rewritten)
        wait_past(ran_by, ttl_s)
        product = 10 + attempt
        orders.append([("+I", (1000, product, 7))])
        result.process_all_available()
        got = [(r.kind.short_string, *r) for r in result.collect() if r[0] == product]
        assert got == [
            ("+I", product, 5),
            ("-U", product, 5),
            ("+U", product, 5),
            ("+I", product, 7),  # the state expired: a new start, 5 is not retracted
        ]
    finally:
        result.cancel()


def test_mini_batch_folds_a_keys_changes_before_emitting(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    """table.exec.mini-batch.enabled: a product's changes of one micro-batch are folded and
    emit one result (Flink's MiniBatchGroupAggFunction): fewer -U/+U, the same table."""
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS, ("order_id",))
    senv.config.set("table.exec.mini-batch.enabled", "true")
    senv.config.set("table.exec.mini-batch.allow-latency", "200 ms")
    senv.config.set("table.exec.mini-batch.size", "1000")
    query = (
        senv.from_path("Orders")
        .group_by(col("product_id"))
        .select(col("product_id"), col("amount").sum.alias("total"), lit(1).count.alias("n"))
    )
    assert "miniBatch=[200 ms]" in query.explain()
    result = query.execute()
    steps = [
        [("+I", (1, 10, 5)), ("+I", (2, 10, 1)), ("+I", (3, 11, 2))],
        [("-U", (2, 10, 1)), ("+U", (2, 10, 4)), ("+I", (4, 10, 1)), ("-D", (3, 11, 2))],
        [("+I", (5, 12, 1)), ("-D", (5, 12, 1))],  # in and out within one batch: nothing
    ]
    try:
        for changes in steps:
            orders.append(changes)
            result.process_all_available()
        got = [(r.kind.short_string, *r) for r in result.collect()]
        assert got[:2] in (
            [("+I", 10, 6, 2), ("+I", 11, 2, 1)],
            [("+I", 11, 2, 1), ("+I", 10, 6, 2)],
        )
        assert sorted(got[2:]) == sorted([("-U", 10, 6, 2), ("+U", 10, 10, 3), ("-D", 11, 2, 1)])
    finally:
        result.cancel()


def skewed_steps(rng: random.Random, steps: int, size: int) -> list[list[Change]]:
    """Orders changes, most of them on one hot product (10): inserts, updates that may move an
    order to another product, deletes; NULL amounts now and then."""
    live: dict[int, tuple] = {}
    out: list[list[Change]] = []
    next_id = 0
    for _ in range(steps):
        step: list[Change] = []
        for _ in range(size):
            product = 10 if rng.random() < 0.8 else rng.randrange(11, 30)
            amount = None if rng.random() < 0.05 else rng.randrange(10)
            r = rng.random()
            if r < 0.5 or not live:
                next_id += 1
                live[next_id] = (next_id, product, amount)
                step.append(("+I", live[next_id]))
            elif r < 0.8:
                order = rng.choice(list(live))
                step += [("-U", live[order]), ("+U", (order, product, amount))]
                live[order] = (order, product, amount)
            else:
                step.append(("-D", live.pop(rng.choice(list(live)))))
        out.append(step)
    return out


def test_two_phase_global_aggregation(senv: TableEnvironment, shared_dir: Path) -> None:
    """A global aggregate (no GROUP BY) in two phases: the local phase groups by the union's
    constant key (it failed analysis, ``__k0`` unresolved: Nexmark's 10M-event count ran into
    it). Its changelog: one count after each micro-batch, -U/+U between."""
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS, ("order_id",))
    senv.config.set("table.exec.mini-batch.enabled", "true")
    senv.config.set("table.exec.mini-batch.allow-latency", "200 ms")
    senv.config.set("table.exec.mini-batch.size", "1000")
    senv.config.set("table.optimizer.agg-phase-strategy", "TWO_PHASE")
    query = senv.from_path("Orders").select(lit(1).count.alias("n"), col("amount").sum.alias("s"))
    assert "LocalGroupAggregate(" in query.explain()
    result = query.execute()
    try:
        for step, changes in enumerate(skewed_steps(random.Random(5), 3, 100)):
            orders.append(changes)
            result.process_all_available()
            rows = orders.current()
            amounts = [r[2] for r in rows if r[2] is not None]
            want = (len(rows), sum(amounts) if amounts else None)
            assert materialized(result) == Counter([want]), f"after step {step}"
        changelog = result.collect()
        assert check_changelog(changelog, 0) == materialized(result)
        assert sum(r.kind is RowKind.INSERT for r in changelog) == 1
    finally:
        result.cancel()


def test_two_phase_aggregation_over_skewed_keys(
    senv: TableEnvironment, shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """table.optimizer.agg-phase-strategy with mini-batch on: TWO_PHASE pre-aggregates each
    task's changes per product before the shuffle (explain shows a LocalGroupAggregate under
    the GlobalGroupAggregate, and the running query's physical plan has the local phase, which
    builds no union row),
    ONE_PHASE does not. Over one hot product's changes spread across several tasks (file
    splits of 2 kB), both give the aggregate of the orders after every micro-batch, and
    Flink's mini-batch changelog: at most one result per product and micro-batch."""
    senv.spark.conf.set("spark.sql.files.maxPartitionBytes", "2k")  # several tasks a file
    senv.spark.conf.set("spark.sql.files.openCostInBytes", "0")
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS, ("order_id",))
    senv.config.set("table.exec.mini-batch.enabled", "true")
    senv.config.set("table.exec.mini-batch.allow-latency", "200 ms")
    senv.config.set("table.exec.mini-batch.size", "100000")

    def query() -> Table:
        return (
            senv.from_path("Orders")
            .group_by(col("product_id"))
            .select(
                col("product_id"),
                col("amount").sum.alias("total"),
                lit(1).count.alias("n"),
                col("amount").max.alias("hi"),
                col("amount").count.distinct.alias("amounts"),
            )
        )

    def want() -> list[tuple]:
        out = []
        for product, rows in group(orders.current(), lambda r: r[1]).items():
            amounts = [r[2] for r in rows if r[2] is not None]
            out.append(
                (product, sum(amounts) if amounts else None, len(rows), max(amounts, default=None),
                 len(set(amounts)))
            )  # fmt: skip
        return out

    results = {}
    for strategy in ("TWO_PHASE", "ONE_PHASE"):
        senv.config.set("table.optimizer.agg-phase-strategy", strategy)
        plan = query().explain()
        assert ("LocalGroupAggregate(groupBy=[product_id]" in plan) == (strategy == "TWO_PHASE")
        assert ("GlobalGroupAggregate(" in plan) == (strategy == "TWO_PHASE"), plan
        results[strategy] = query().execute()
    try:
        seen = dict.fromkeys(results, 0)
        for step, changes in enumerate(skewed_steps(random.Random(21), 3, 300)):
            orders.append(changes)
            for strategy, result in results.items():
                result.process_all_available()
                assert materialized(result) == Counter(want()), f"{strategy} after step {step}"
                changelog = result.collect()
                new, seen[strategy] = changelog[seen[strategy] :], len(changelog)
                per_product = Counter(r[0] for r in new if r.kind is not RowKind.UPDATE_BEFORE)
                assert max(per_product.values()) == 1, f"{strategy}: {per_product}"
        for strategy, result in results.items():
            assert check_changelog(result.collect(), 1) == materialized(result), strategy
        for strategy, result in results.items():  # the local phase runs before the shuffle
            result.query.explain()
            physical = capsys.readouterr().out
            shuffle = physical.index("Exchange hashpartitioning(__k0")
            local = physical.find("LocalGroupAggregate", shuffle)  # the plugin's own operator
            assert (local >= 0) == (strategy == "TWO_PHASE"), physical
            assert "!LocalGroupAggregate" not in physical, physical  # (no input missing)
            if local >= 0:  # it evaluates the union's projection itself: no union row below
                below = physical[local:].splitlines()[1]
                assert "FileScan" in physical[local:] and "AS __in0" not in below, physical
    finally:
        for result in results.values():
            result.cancel()
