"""Batch joins on a real Spark Connect server against a plain-Python reference."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tableapi import TableEnvironment, ValidationError, col, lit
from tests.reference import JOIN_METHODS, as_bag, eq, nested_loop_join

ORDERS = [  # order_id, product_id, amount
    (1, 10, 3),
    (2, 11, 5),
    (3, 99, 1),
    (4, None, 2),
    (5, 10, 8),
    (6, 12, 4),
]
PRODUCTS = [  # id, name, price
    (10, "Apple", 2),
    (11, "Pear", 9),
    (12, "Fig", 1),
    (12, "Fig2", 7),
    (13, "Kiwi", 3),
    (None, "Nothing", 5),
]
KINDS = JOIN_METHODS


def _tables(env: TableEnvironment, orders=ORDERS, products=PRODUCTS):
    o = env.from_elements(orders, "order_id BIGINT, product_id BIGINT, amount INT")
    p = env.from_elements(products, "id BIGINT, name STRING, price INT")
    return o, p


CONDITIONS = {
    # name: (Table API predicate, Python predicate on (order, product))
    "equi": (col("product_id") == col("id"), lambda o, p: eq(o[1], p[0])),
    "equi+residual": (
        (col("product_id") == col("id")) & (col("amount") > col("price")),
        lambda o, p: eq(o[1], p[0]) and o[2] > p[2],
    ),
    "residual-only": (col("amount") > col("price") + 4, lambda o, p: o[2] > p[2] + 4),
    "null-safe": (col("product_id").is_not_distinct_from(col("id")), lambda o, p: o[1] == p[0]),
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_join_kinds_match_reference(env: TableEnvironment, kind: str, condition: str) -> None:
    orders, products = _tables(env)
    predicate, reference = CONDITIONS[condition]
    joined = getattr(orders, KINDS[kind])(products, predicate)
    got = as_bag(joined.execute().collect())
    assert got == as_bag(nested_loop_join(ORDERS, PRODUCTS, kind, reference))


def test_null_keys_never_match_but_are_kept_by_outer_joins(env: TableEnvironment) -> None:
    orders, products = _tables(env)
    rows = orders.full_outer_join(products, col("product_id") == col("id")).execute().collect()
    assert (4, None, 2, None, None, None) in rows  # order with NULL key, unmatched
    assert (None, None, None, None, "Nothing", 5) in rows  # product with NULL key, unmatched
    assert not [r for r in rows if r[1] is None and r[3] is None and r[0] and r[4]]


def test_cross_join_filtered_with_where_is_an_equi_join(env: TableEnvironment) -> None:
    orders, products = _tables(env)
    table = orders.join(products).where(col("product_id") == col("id"))
    assert "leftKeys=[product_id]" in table.explain()
    expected = nested_loop_join(ORDERS, PRODUCTS, "inner", lambda o, p: eq(o[1], p[0]))
    assert as_bag(table.execute().collect()) == as_bag(expected)


def test_in_table_is_a_semi_join(env: TableEnvironment) -> None:
    orders, products = _tables(env)
    table = orders.where(col("product_id").in_(products.select(col("id"))) & (col("amount") > 2))
    expected = [o for o in ORDERS if any(eq(o[1], p[0]) for p in PRODUCTS) and o[2] > 2]
    assert "LeftSemiJoin" in table.explain()
    assert as_bag(table.execute().collect()) == as_bag(expected)


def test_three_way_join_with_projection_and_aggregate(env: TableEnvironment) -> None:
    orders, products = _tables(env)
    shipments = env.from_elements(
        [(1, "DHL"), (2, "UPS"), (5, "DHL"), (7, "UPS")], ["s_order_id", "carrier"]
    )
    table = (
        orders.join(products, col("product_id") == col("id"))
        .join(shipments, col("order_id") == col("s_order_id"))
        .group_by(col("carrier"))
        .select(
            col("carrier"),
            (col("amount") * col("price")).sum.alias("revenue"),
            col("order_id").count.alias("n"),
        )
    )
    expected: dict[str, list[int]] = {}
    for o in ORDERS:
        for p in PRODUCTS:
            for s in [(1, "DHL"), (2, "UPS"), (5, "DHL"), (7, "UPS")]:
                if eq(o[1], p[0]) and o[0] == s[0]:
                    acc = expected.setdefault(s[1], [0, 0])
                    acc[0] += o[2] * p[2]
                    acc[1] += 1
    got = {r.carrier: [r.revenue, r.n] for r in table.execute().collect()}
    assert got == expected


@pytest.mark.parametrize(
    ("hint", "operator"),
    [
        ("BROADCAST", "BroadcastHashJoin"),
        ("SHUFFLE_HASH", "ShuffledHashJoin"),
        ("SHUFFLE_MERGE", "SortMergeJoin"),
        ("SHUFFLE_REPLICATE_NL", "CartesianProduct"),
    ],
)
def test_hint_reaches_spark_physical_plan(
    env: TableEnvironment, shared_dir, hint: str, operator: str
) -> None:
    from tests.integration.files import register_json

    register_json(
        env, shared_dir, "Orders", "order_id BIGINT, product_id BIGINT, amount INT", ORDERS
    )
    register_json(env, shared_dir, "Product", "id BIGINT, name STRING, price INT", PRODUCTS)
    table = (
        env.from_path("Orders")
        .join(env.from_path("Product"), col("product_id") == col("id"))
        .with_hint(hint, "Product")
    )
    plan = table.explain(physical=True)
    assert f"[{hint} right:Product]" in plan
    assert operator in plan.split("== Spark Physical Plan ==")[1]
    expected = nested_loop_join(ORDERS, PRODUCTS, "inner", lambda o, p: eq(o[1], p[0]))
    assert as_bag(table.execute().collect()) == as_bag(expected)


def test_unused_hint_is_ignored_and_explained(env: TableEnvironment, shared_dir) -> None:
    from tests.integration.files import register_json

    register_json(env, shared_dir, "Product", "id BIGINT, name STRING, price INT", PRODUCTS)
    table = env.from_path("Product").where(col("price") > 2).with_hint("BROADCAST", "Product")
    assert "applies to no join" in table.explain()
    assert len(table.execute().collect()) == len([p for p in PRODUCTS if p[2] > 2])


small = st.lists(
    st.tuples(st.one_of(st.none(), st.integers(0, 4)), st.integers(-3, 3)), min_size=0, max_size=8
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(left=small, right=small, kind=st.sampled_from(list(KINDS)))
def test_random_inputs_match_reference(env: TableEnvironment, left, right, kind) -> None:
    lt = env.from_elements(left, "k BIGINT, v INT")
    rt = env.from_elements(right, "rk BIGINT, rv INT")
    predicate = (col("k") == col("rk")) & (col("v") <= col("rv") + lit(1))
    table = getattr(lt, KINDS[kind])(rt, predicate)
    expected = nested_loop_join(
        left, right, kind, lambda a, b: eq(a[0], b[0]) and a[1] <= b[1] + 1, widths=(2, 2)
    )
    assert as_bag(table.execute().collect()) == as_bag(expected)


def test_ambiguous_columns_fail_before_running(env: TableEnvironment) -> None:
    orders, _ = _tables(env)
    other = env.from_elements([(1, 2)], ["order_id", "x"])
    with pytest.raises(ValidationError, match="rename_columns"):
        orders.join(other, col("order_id") == col("x"))
