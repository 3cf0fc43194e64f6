"""Streaming regular joins on a real server: changelog inputs in several micro-batches.

After every micro-batch the materialized result must equal the batch join of the inputs'
current contents, computed in plain Python (tests/reference.py).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tableapi import Schema, TableDescriptor, TableEnvironment, ValidationError, col
from tableapi.types import TimeKind
from tests.integration.changelog_files import Change, ChangelogTable, fresh_root
from tests.integration.files import write_json
from tests.integration.processing_time import wait_past, within_ttl
from tests.reference import JOIN_METHODS, as_bag, eq, nested_loop_join

KINDS = JOIN_METHODS
ORDER_COLUMNS = [("order_id", "BIGINT"), ("product_id", "BIGINT"), ("amount", "INT")]
PRODUCT_COLUMNS = [("id", "BIGINT"), ("name", "STRING"), ("price", "INT")]
TTL_S = 5  # the STATE_TTL tests' TTL


def join_of(orders, products, kind: str, predicate):
    return getattr(orders, KINDS[kind])(products, predicate)


def check(result, kind: str, orders: ChangelogTable, products: ChangelogTable, pred) -> None:
    """Process what the files hold now, then compare with the reference join."""
    result.process_all_available()
    got = as_bag(result.materialize().itertuples(index=False, name=None))
    want = as_bag(nested_loop_join(orders.current(), products.current(), kind, pred, widths=(3, 3)))
    assert _normal(got) == _normal(want), (
        f"{kind} join differs from the reference\nchangelog:\n"
        + "\n".join(map(repr, result.collect()))
    )


def check_three_way(result, tables, script, first, second) -> None:
    """Append each step's changes to the three tables (Orders, Ships, Pays: two columns
    each), then compare with ``(t0 first t1) second t2``; ``first``/``second`` are
    ``(kind, predicate)`` pairs for the reference."""
    for changes in script:
        for table, change in zip(tables, changes, strict=True):
            table.append(change)
        result.process_all_available()
        two = nested_loop_join(tables[0].current(), tables[1].current(), *first, (2, 2))
        want = nested_loop_join(two, tables[2].current(), *second, (4, 2))
        got = as_bag(result.materialize().itertuples(index=False, name=None))
        assert _normal(got) == _normal(as_bag(want)), "\n".join(map(repr, result.collect()))


def _normal(bag):
    """pandas turns NULLs of numeric columns into NaN: compare with None instead."""
    out = {}
    for row, n in bag.items():
        key = tuple(None if v != v else v for v in row)  # NaN != NaN
        out[key] = out.get(key, 0) + n
    return out


# A scripted sequence: inserts, an update (-U/+U), deletes and a key that comes back, on both
# sides, over four micro-batches.
SCRIPT: list[tuple[list[Change], list[Change]]] = [
    (  # orders, products
        [("+I", (1, 10, 3)), ("+I", (2, 11, 5)), ("+I", (3, None, 1)), ("+I", (4, 12, 2))],
        [("+I", (12, "Fig", 1))],
    ),
    ([("+I", (5, 10, 8))], [("+I", (10, "Apple", 2)), ("+I", (13, "Kiwi", 3))]),
    (
        [("-U", (2, 11, 5)), ("+U", (2, 13, 5)), ("-D", (4, 12, 2))],
        [("-U", (10, "Apple", 2)), ("+U", (10, "Apple", 9))],
    ),
    ([("+I", (6, 12, 7))], [("-D", (10, "Apple", 9)), ("-D", (13, "Kiwi", 3))]),
]
CONDITIONS = {
    "equi": (col("product_id") == col("id"), lambda o, p: eq(o[1], p[0])),
    "equi+residual": (
        (col("product_id") == col("id")) & (col("amount") > col("price")),
        lambda o, p: eq(o[1], p[0]) and o[2] > p[2],
    ),
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("keys", ["no keys", "primary keys"])
def test_scripted_changelog_matches_reference_after_every_batch(
    senv: TableEnvironment, shared_dir: Path, kind: str, keys: str
) -> None:
    with_keys = keys == "primary keys"
    orders = ChangelogTable(
        senv, shared_dir, "Orders", ORDER_COLUMNS, ("order_id",) if with_keys else ()
    )
    products = ChangelogTable(
        senv, shared_dir, "Product", PRODUCT_COLUMNS, ("id",) if with_keys else ()
    )
    predicate, reference = CONDITIONS["equi+residual" if kind in ("left", "anti") else "equi"]
    query = join_of(senv.from_path("Orders"), senv.from_path("Product"), kind, predicate)
    plan = query.explain()
    if with_keys:
        assert "leftInputSpec=[HasUniqueKey]" in plan
        assert "rightInputSpec=[JoinKeyContainsUniqueKey]" in plan
    else:
        assert "leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey]" in plan
    assert "operator=[server_ext join processor], stateBackend=[hashmap]" in plan
    result = query.execute()
    try:
        for order_changes, product_changes in SCRIPT:
            orders.append(order_changes)
            products.append(product_changes)
            check(result, kind, orders, products, reference)
    finally:
        result.cancel()


def test_left_join_retracts_and_restores_the_null_padded_row(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS)
    products = ChangelogTable(senv, shared_dir, "Product", PRODUCT_COLUMNS, ("id",))
    result = (
        senv.from_path("Orders")
        .left_outer_join(senv.from_path("Product"), col("product_id") == col("id"))
        .execute()
    )
    try:
        orders.append([("+I", (1, 10, 3))])
        result.process_all_available()
        assert [repr(r) for r in result.collect()] == ["+I[1, 10, 3, <NULL>, <NULL>, <NULL>]"]
        products.append([("+I", (10, "Apple", 2))])
        result.process_all_available()
        assert [repr(r) for r in result.collect()][1:] == [
            "-D[1, 10, 3, <NULL>, <NULL>, <NULL>]",
            "+I[1, 10, 3, 10, Apple, 2]",
        ]
        products.append([("-D", (10, "Apple", 2))])
        result.process_all_available()
        assert [repr(r) for r in result.collect()][3:] == [
            "-D[1, 10, 3, 10, Apple, 2]",
            "+I[1, 10, 3, <NULL>, <NULL>, <NULL>]",
        ]
    finally:
        result.cancel()


def test_insert_only_inner_join_takes_sparks_native_join(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS, op_column=None)
    products = ChangelogTable(senv, shared_dir, "Product", PRODUCT_COLUMNS, op_column=None)
    query = senv.from_path("Orders").join(senv.from_path("Product"), col("product_id") == col("id"))
    senv.config.set("table.exec.join.spark-native.enabled", "true")  # the default: the operator
    plan = query.explain()
    assert "operator=[spark stream-stream join], stateBackend=[hashmap], changelogMode=[I]" in plan
    result = query.execute()
    try:
        orders.append([("+I", (1, 10, 3)), ("+I", (2, None, 1))])
        products.append([("+I", (10, "Apple", 2))])
        check(result, "inner", orders, products, lambda o, p: eq(o[1], p[0]))
        orders.append([("+I", (3, 10, 1))])
        check(result, "inner", orders, products, lambda o, p: eq(o[1], p[0]))
        assert all(r.kind.short_string == "+I" for r in result.collect())
    finally:
        result.cancel()


def test_join_without_equi_key_runs_in_one_partition(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS)
    products = ChangelogTable(senv, shared_dir, "Product", PRODUCT_COLUMNS)
    query = senv.from_path("Orders").left_outer_join(
        senv.from_path("Product"), col("amount") > col("price")
    )
    assert "no equi key: a single partition joins all rows" in query.explain()
    result = query.execute()
    pred = lambda o, p: o[2] is not None and p[2] is not None and o[2] > p[2]  # noqa: E731
    try:
        orders.append([("+I", (1, 10, 3)), ("+I", (2, 11, 1))])
        products.append([("+I", (10, "Apple", 2))])
        check(result, "left", orders, products, pred)
        products.append([("-D", (10, "Apple", 2)), ("+I", (11, "Pear", 0))])
        check(result, "left", orders, products, pred)
    finally:
        result.cancel()


def test_null_keys_never_match_but_null_safe_keys_do(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS)
    products = ChangelogTable(senv, shared_dir, "Product", PRODUCT_COLUMNS)
    o, p = senv.from_path("Orders"), senv.from_path("Product")
    plain = o.full_outer_join(p, col("product_id") == col("id")).execute()
    safe = o.full_outer_join(p, col("product_id").is_not_distinct_from(col("id"))).execute()
    try:
        orders.append([("+I", (1, None, 3)), ("+I", (2, 10, 1))])
        products.append([("+I", (None, "Nothing", 2)), ("+I", (10, "Apple", 2))])
        check(plain, "full", orders, products, lambda o, p: eq(o[1], p[0]))
        check(safe, "full", orders, products, lambda o, p: o[1] == p[0])
        orders.append([("-D", (1, None, 3))])
        check(plain, "full", orders, products, lambda o, p: eq(o[1], p[0]))
        check(safe, "full", orders, products, lambda o, p: o[1] == p[0])
    finally:
        plain.cancel()
        safe.cancel()


def test_state_ttl_expires_rows_of_the_hinted_table(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    """A Product row joins an order of a later micro-batch within the TTL, and none once the
    TTL has passed (on the engine's processing time: tests/integration/processing_time.py)."""
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS)
    products = ChangelogTable(senv, shared_dir, "Product", PRODUCT_COLUMNS)
    query = (
        senv.from_path("Orders")
        .join(senv.from_path("Product"), col("product_id") == col("id"))
        .with_hint("STATE_TTL", Product=f"{TTL_S} s")
    )
    assert f"rightStateTtl=[{TTL_S * 1000} ms]" in query.explain()
    result = query.execute()
    try:
        # A first batch starts the query (its start-up is slower than the batches after).
        orders.append([("+I", (0, 99, 1))])
        result.process_all_available()

        def alive(attempt: int) -> None:  # products, then an order of one: two batches
            products.append([("+I", (10 + attempt, "Pear", 4)), ("+I", (20 + attempt, "Apple", 2))])
            result.process_all_available()
            orders.append([("+I", (1 + attempt, 10 + attempt, 1))])
            result.process_all_available()

        attempt, ran_by = within_ttl(TTL_S, alive)
        joined = [repr(r) for r in result.collect()]
        pears = [f"+I[{1 + a}, {10 + a}, 1, {10 + a}, Pear, 4]" for a in range(attempt + 1)]
        assert pears[attempt] in joined and set(joined) <= set(pears), joined  # Pear alive
        wait_past(ran_by, TTL_S)
        orders.append([("+I", (100 + a, 20 + a, 1)) for a in range(attempt + 1)])
        result.process_all_available()
        assert [repr(r) for r in result.collect()] == joined  # every Apple expired: no match
    finally:
        result.cancel()


def test_rowtime_in_a_regular_join_is_materialized(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    # Flink 2.3 runs a regular join over rowtime columns (the conformance suite found it):
    # the output's time attribute is materialized (issue 11). Flink's schema still shows the
    # *ROWTIME* mark (conformance README, difference 14), but no later operator takes it as
    # event time.
    schema = (
        Schema.new_builder()
        .column("e_id", "BIGINT")
        .column("ts", "TIMESTAMP(3)")
        .watermark("ts", "ts - INTERVAL '5' SECOND")
        .build()
    )
    events = shared_dir / "events"
    write_json(events, ["e_id", "ts"], [(10, dt.datetime(2026, 1, 1, 10)), (99, None)])
    descriptor = TableDescriptor.for_connector("filesystem").schema(schema)
    senv.create_temporary_table(
        "Events", descriptor.option("path", str(events)).option("format", "json").build()
    )
    products = ChangelogTable(senv, shared_dir, "Product", PRODUCT_COLUMNS)
    products.append([("+I", (10, "Apple", 2))])
    query = senv.from_path("Events").join(senv.from_path("Product"), col("e_id") == col("id"))
    ts = query.row_type.field("ts").type
    assert (str(ts), ts.time_kind) == ("TIMESTAMP(3) *ROWTIME*", TimeKind.MATERIALIZED_ROWTIME)
    result = query.execute()
    try:
        result.process_all_available()
        assert [tuple(r) for r in result.collect()] == [
            (10, dt.datetime(2026, 1, 1, 10), 10, "Apple", 2)
        ]
    finally:
        result.cancel()


def test_updating_result_into_an_append_only_sink_is_an_error(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS, op_column=None)
    ChangelogTable(senv, shared_dir, "Product", PRODUCT_COLUMNS, op_column=None)
    ChangelogTable(
        senv,
        shared_dir,
        "Sink",
        [*ORDER_COLUMNS, *PRODUCT_COLUMNS],
        op_column=None,
    )
    query = senv.from_path("Orders").left_outer_join(
        senv.from_path("Product"), col("product_id") == col("id")
    )
    with pytest.raises(ValidationError, match=r"doesn't support consuming update and delete"):
        query.execute_insert("Sink")
    assert not senv.spark.streams.active


def test_a_restarted_query_resumes_from_its_checkpoint(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    senv.config.set("execution.checkpointing.dir", str(shared_dir / "checkpoints"))
    senv.config.set("pipeline.name", "orders-with-products")
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS)
    products = ChangelogTable(senv, shared_dir, "Product", PRODUCT_COLUMNS)

    def start():
        return (
            senv.from_path("Orders")
            .left_outer_join(senv.from_path("Product"), col("product_id") == col("id"))
            .execute()
        )

    first = start()
    orders.append([("+I", (1, 10, 3))])
    first.process_all_available()
    first.cancel()
    products.append([("+I", (10, "Apple", 2))])
    second = start()  # remembers order 1 (state) and does not read its file again (offsets)
    try:
        second.process_all_available()
        assert [repr(r) for r in second.collect()] == [  # the job's changelog, both runs
            "+I[1, 10, 3, <NULL>, <NULL>, <NULL>]",
            "-D[1, 10, 3, <NULL>, <NULL>, <NULL>]",
            "+I[1, 10, 3, 10, Apple, 2]",
        ]
        assert second.materialize().values.tolist() == [[1, 10, 3, 10, "Apple", 2]]
    finally:
        second.cancel()


def test_long_op_names_and_unknown_op_values(senv: TableEnvironment, shared_dir: Path) -> None:
    """changelog.op-column also takes I/UB/UA/D; an unknown value fails the query, loudly."""
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS)
    products = ChangelogTable(senv, shared_dir, "Product", PRODUCT_COLUMNS)
    pred = lambda o, p: eq(o[1], p[0])  # noqa: E731
    result = (
        senv.from_path("Orders")
        .left_outer_join(senv.from_path("Product"), col("product_id") == col("id"))
        .execute()
    )
    try:
        orders.append([("I", (1, 10, 3)), ("I", (2, 10, 4))])
        products.append([("I", (10, "Apple", 2))])
        orders.append([("UB", (1, 10, 3)), ("UA", (1, 10, 5)), ("D", (2, 10, 4))])
        check(result, "left", orders, products, pred)
        orders.append([("upsert", (3, 10, 1))])
        with pytest.raises(Exception, match=r"holds the unknown value 'upsert'; use \+I, -U"):
            result.process_all_available()
    finally:
        result.cancel()


# -- random changelogs ---------------------------------------------------------------------------
def _changes(draw, existing: list[tuple], make_row) -> list[Change]:
    """A few random changes that are valid against ``existing`` (retract only what is there)."""
    out: list[Change] = []
    alive = list(existing)
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["+I", "+I", "-D", "U"]))
        if op == "+I" or not alive:
            row = make_row(draw)
            out.append(("+I", row))
            alive.append(row)
        elif op == "-D":
            row = alive.pop(draw(st.integers(0, len(alive) - 1)))
            out.append(("-D", row))
        else:
            row = alive.pop(draw(st.integers(0, len(alive) - 1)))
            new = make_row(draw)
            out += [("-U", row), ("+U", new)]
            alive.append(new)
    return out


@st.composite
def scripts(draw) -> list[tuple[list[Change], list[Change]]]:
    def order(d):
        return (
            d(st.integers(1, 3)),
            d(st.one_of(st.none(), st.integers(10, 12))),
            d(st.integers(0, 4)),
        )

    def product(d):
        return (
            d(st.one_of(st.none(), st.integers(10, 12))),
            d(st.sampled_from("ab")),
            d(st.integers(0, 4)),
        )

    orders: list[tuple] = []
    products: list[tuple] = []
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        o = _changes(draw, orders, order)
        p = _changes(draw, products, product)
        for changes, rows in ((o, orders), (p, products)):
            for op, row in changes:
                rows.append(row) if op in ("+I", "+U") else rows.remove(row)
        steps.append((o, p))
    return steps


@pytest.mark.parametrize("kind", list(KINDS))
@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(script=scripts())
def test_random_changelogs_match_reference(
    senv: TableEnvironment, shared_dir: Path, kind: str, script
) -> None:
    root = fresh_root(senv, shared_dir, "Orders", "Product")
    orders = ChangelogTable(senv, root, "Orders", ORDER_COLUMNS)
    products = ChangelogTable(senv, root, "Product", PRODUCT_COLUMNS)
    predicate, reference = CONDITIONS["equi+residual"]
    result = join_of(senv.from_path("Orders"), senv.from_path("Product"), kind, predicate).execute()
    try:
        for order_changes, product_changes in script:
            orders.append(order_changes)
            products.append(product_changes)
            check(result, kind, orders, products, reference)
    finally:
        result.cancel()


@pytest.mark.parametrize(
    ("first", "spec"), [("inner", "JoinKeyContainsUniqueKey"), ("full", "HasUniqueKey")]
)
def test_join_of_a_join_keeps_its_state_by_the_joins_unique_key(
    senv: TableEnvironment, shared_dir: Path, first: str, spec: str
) -> None:
    """Orders, Shipments and Payments share the order id (each its primary key). The first
    join's output has a unique key (Flink's upsert keys), so the second join keeps its left
    state by it; the result must still follow every update and delete."""
    orders = ChangelogTable(
        senv, shared_dir, "Orders", [("order_id", "BIGINT"), ("amount", "INT")], ("order_id",)
    )
    ships = ChangelogTable(
        senv, shared_dir, "Ships", [("s_id", "BIGINT"), ("carrier", "STRING")], ("s_id",)
    )
    pays = ChangelogTable(
        senv, shared_dir, "Pays", [("p_id", "BIGINT"), ("paid", "INT")], ("p_id",)
    )
    query = join_of(
        senv.from_path("Orders"), senv.from_path("Ships"), first, col("order_id") == col("s_id")
    ).left_outer_join(senv.from_path("Pays"), col("order_id") == col("p_id"))
    assert f"leftInputSpec=[{spec}], rightInputSpec=[JoinKeyContainsUniqueKey]" in (query.explain())
    script = [
        ([("+I", (1, 10)), ("+I", (2, 20)), ("+I", (3, 30))], [("+I", (1, "DHL"))], []),
        (
            [("-U", (2, 20)), ("+U", (2, 25))],
            [("+I", (2, "UPS")), ("+I", (4, "DHL"))],
            [("+I", (1, 10)), ("+I", (2, 25))],
        ),
        (
            [("-D", (1, 10)), ("+I", (4, 40))],
            [("-U", (1, "DHL")), ("+U", (1, "UPS")), ("-D", (2, "UPS"))],
            [("-U", (2, 25)), ("+U", (2, 26)), ("+I", (4, 40))],
        ),
        ([("+I", (1, 11))], [("+I", (2, "DHL"))], [("-D", (1, 10))]),
    ]
    result = query.execute()
    try:
        check_three_way(
            result,
            (orders, ships, pays),
            script,
            (first, lambda o, s: eq(o[0], s[0])),
            ("left", lambda os, p: eq(os[0], p[0])),
        )
    finally:
        result.cancel()


def test_a_one_to_many_join_gives_the_next_join_no_key(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    """An order with two shipments gives two rows with the same order id: the order id is no
    key of the join, and the next join must keep both rows (a wrong key would keep one)."""
    orders = ChangelogTable(
        senv, shared_dir, "Orders", [("order_id", "BIGINT"), ("amount", "INT")], ("order_id",)
    )
    ships = ChangelogTable(
        senv,
        shared_dir,
        "Ships",
        [("ship_no", "BIGINT"), ("s_id", "BIGINT"), ("carrier", "STRING")],
        ("ship_no",),
    )
    pays = ChangelogTable(
        senv, shared_dir, "Pays", [("p_id", "BIGINT"), ("paid", "INT")], ("p_id",)
    )
    query = (
        senv.from_path("Orders")
        .join(senv.from_path("Ships"), col("order_id") == col("s_id"))
        .left_outer_join(senv.from_path("Pays"), col("order_id") == col("p_id"))
    )
    assert "leftInputSpec=[NoUniqueKey]" in query.explain().split("LeftOuterJoin")[1]
    result = query.execute()
    try:
        orders.append([("+I", (1, 10)), ("+I", (2, 20))])
        ships.append([("+I", (100, 1, "DHL")), ("+I", (101, 1, "UPS")), ("+I", (102, 2, "DHL"))])
        pays.append([("+I", (1, 10))])
        result.process_all_available()
        orders.append([("-U", (1, 10)), ("+U", (1, 11))])
        ships.append([("-D", (102, 2, "DHL"))])
        result.process_all_available()
        inner = nested_loop_join(
            orders.current(), ships.current(), "inner", lambda o, s: eq(o[0], s[1]), (2, 3)
        )
        want = nested_loop_join(inner, pays.current(), "left", lambda r, p: eq(r[0], p[0]), (5, 2))
        got = as_bag(result.materialize().itertuples(index=False, name=None))
        assert _normal(got) == _normal(as_bag(want))
        assert len(want) == 2  # both shipments of order 1
    finally:
        result.cancel()


@pytest.mark.parametrize("kind", list(KINDS))
def test_single_side_terms_filtered_before_the_join_keep_the_results(
    senv: TableEnvironment, shared_dir: Path, kind: str
) -> None:
    """One-side terms of the condition filter that side first where the kind allows (Flink's
    filter push-down); updates that cross the filter (Apple's price 2 -> 9) must still give
    the reference result."""
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDER_COLUMNS, ("order_id",))
    products = ChangelogTable(senv, shared_dir, "Product", PRODUCT_COLUMNS, ("id",))
    predicate = (col("product_id") == col("id")) & (col("amount") > 2) & (col("price") < 9)
    query = join_of(senv.from_path("Orders"), senv.from_path("Product"), kind, predicate)
    pushed_right = kind != "full" and kind != "right"
    assert ("Calc(select=[id, name, price], where=[(price < 9)]" in query.explain()) is (
        pushed_right
    )
    result = query.execute()
    try:
        for order_changes, product_changes in SCRIPT:
            orders.append(order_changes)
            products.append(product_changes)
            check(
                result,
                kind,
                orders,
                products,
                lambda o, p: eq(o[1], p[0]) and o[2] > 2 and p[2] < 9,
            )
    finally:
        result.cancel()
