"""Optimizer rules: computed columns, join-condition splitting, IN to semi join, hints."""

from __future__ import annotations

import pytest

from tableapi import TableEnvironment, col, lit, row
from tableapi.errors import ValidationError
from tableapi.expressions import Column
from tableapi.plan import EquiKey, Filter, Join, JoinKind, Project, QueryHints, Scan
from tableapi.rules.computed_columns import expand_computed_columns
from tableapi.rules.hints import direct_table, propagate_hints
from tableapi.rules.joins import (
    in_subquery_to_semi_join,
    merge_filters_into_inner_joins,
    split_join_conditions,
)


@pytest.fixture
def orders(catalog):
    return catalog.from_path("Orders")


@pytest.fixture
def product(catalog):
    return catalog.from_path("Product")


@pytest.fixture
def shipments(catalog):
    return catalog.from_path("Shipments")


def optimized(table):
    return table.optimized().plan


def joins(plan):
    return [n for n in plan.walk() if isinstance(n, Join)]


# -- computed columns -------------------------------------------------------------------------
def test_scan_before_optimizing_shows_all_columns(orders):
    scan = orders._plan
    assert isinstance(scan, Scan)
    assert not scan.physical_only
    assert scan.row_type.names[-2:] == ("o_proctime", "amount_x2")


def test_computed_columns_expand_into_a_project_above_a_physical_scan(orders):
    plan = optimized(orders)
    assert isinstance(plan, Project)
    assert plan.names == (
        "order_id",
        "product_id",
        "amount",
        "currency",
        "o_rowtime",
        "o_proctime",
        "amount_x2",
    )
    assert [str(e) for e in plan.exprs] == [
        "order_id",
        "product_id",
        "amount",
        "currency",
        "o_rowtime",
        "PROCTIME()",
        "(amount * 2)",
    ]
    scan = plan.input
    assert isinstance(scan, Scan)
    assert scan.physical_only
    assert scan.table_name == "Orders"
    assert scan.row_type.names == ("order_id", "product_id", "amount", "currency", "o_rowtime")
    # the projection derives the same row type the query was typed against
    assert plan.row_type == orders.row_type


def test_table_without_computed_columns_gets_no_project(product):
    plan = optimized(product)
    assert isinstance(plan, Scan)
    assert plan.physical_only
    assert plan.row_type.names == ("id", "name")


def test_computed_column_rule_is_idempotent(orders):
    once = expand_computed_columns(orders._plan)
    twice = expand_computed_columns(once)
    assert isinstance(twice, Project) and isinstance(twice.input, Scan)
    assert twice.input.physical_only
    assert [type(n).__name__ for n in twice.walk()] == ["Project", "Scan"]


def test_computed_columns_expand_below_joins(orders, product):
    plan = optimized(orders.join(product, col("product_id") == col("id")))
    assert isinstance(plan, Join)
    assert isinstance(plan.left, Project) and isinstance(plan.left.input, Scan)
    assert plan.left.input.physical_only
    assert isinstance(plan.right, Scan) and plan.right.physical_only


def test_elements_tables_are_marked_physical_only(env):
    t = env.from_elements([(1, "a")], ["id", "name"])
    plan = optimized(t)
    assert isinstance(plan, Scan) and plan.physical_only


# -- join-condition splitting -----------------------------------------------------------------
def test_equi_key(orders, product):
    join = optimized(orders.join(product, col("product_id") == col("id")))
    assert join.equi_keys == (EquiKey("product_id", "id"),)
    assert join.residual is None


def test_equi_key_with_reversed_sides(orders, product):
    join = optimized(orders.join(product, col("id") == col("product_id")))
    assert join.equi_keys == (EquiKey("product_id", "id", null_safe=False),)
    assert str(join.equi_keys[0]) == "product_id = id"


def test_is_not_distinct_from_gives_a_null_safe_key(orders, product):
    join = optimized(orders.join(product, col("product_id").is_not_distinct_from(col("id"))))
    assert join.equi_keys == (EquiKey("product_id", "id", null_safe=True),)
    assert str(join.equi_keys[0]) == "product_id IS NOT DISTINCT FROM id"


def test_non_equi_term_goes_to_the_residual(orders, product):
    cond = (col("product_id") == col("id")) & (col("amount") > 10) & (col("name") != "x")
    join = optimized(orders.full_outer_join(product, cond))  # (a full join pushes nothing)
    assert join.equi_keys == (EquiKey("product_id", "id"),)
    assert str(join.residual) == "((amount > 10) AND (name <> 'x'))"


def test_several_equi_keys(orders, shipments):
    cond = (col("order_id") == col("s_order_id")) & (col("o_rowtime") == col("s_rowtime"))
    join = optimized(orders.join(shipments, cond))
    assert join.equi_keys == (EquiKey("order_id", "s_order_id"), EquiKey("o_rowtime", "s_rowtime"))
    assert join.residual is None


@pytest.mark.parametrize(
    "cond",
    [
        col("product_id") + 0 == col("id"),  # not a plain column
        col("product_id") == 10,  # a literal, one side only
        col("order_id") == col("product_id"),  # both columns on the left
        col("product_id") < col("id"),  # not an equality
        (col("product_id") == col("id")) | (col("amount") > 1),  # under OR
    ],
)
def test_terms_that_are_not_equi_keys(orders, product, cond):
    join = optimized(orders.full_outer_join(product, cond))
    assert join.equi_keys == ()
    assert join.residual.same_as(cond)


@pytest.mark.parametrize(
    ("kind", "left_filter", "right_filter", "residual"),
    [
        ("join", "(amount > 10)", "(name <> 'x')", "(amount > id)"),
        ("left_outer_join", None, "(name <> 'x')", "((amount > 10) AND (amount > id))"),
        ("right_outer_join", "(amount > 10)", None, "((name <> 'x') AND (amount > id))"),
        ("full_outer_join", None, None, "(((amount > 10) AND (name <> 'x')) AND (amount > id))"),
        ("semi_join", "(amount > 10)", "(name <> 'x')", "(amount > id)"),
        ("anti_join", None, "(name <> 'x')", "((amount > 10) AND (amount > id))"),
    ],
)
def test_single_side_terms_filter_the_sides_the_join_kind_allows(
    orders, product, kind, left_filter, right_filter, residual
):
    cond = (
        (col("product_id") == col("id"))
        & (col("amount") > 10)
        & (col("name") != "x")
        & (col("amount") > col("id"))
    )
    join = optimized(getattr(orders, kind)(product, cond))
    assert join.equi_keys == (EquiKey("product_id", "id"),)
    for side, want in ((join.left, left_filter), (join.right, right_filter)):
        if want is None:
            assert not isinstance(side, Filter)
        else:
            assert isinstance(side, Filter) and str(side.condition) == want
    assert str(join.residual) == residual
    for pushed in (left_filter, right_filter):  # the join's condition no longer has them
        assert pushed is None or pushed not in str(join.condition)


def test_a_where_after_an_inner_join_filters_the_side_it_reads(orders, product):
    join = optimized(
        orders.join(product).where((col("product_id") == col("id")) & (col("name") != "y"))
    )
    assert join.equi_keys == (EquiKey("product_id", "id"),) and join.residual is None
    assert isinstance(join.right, Filter) and str(join.right.condition) == "(name <> 'y')"


def test_no_predicate_gives_no_keys(orders, product):
    join = optimized(orders.join(product))
    assert join.condition is None
    assert join.equi_keys == ()
    assert join.residual is None


def test_split_rule_leaves_split_joins_alone(orders, product):
    once = split_join_conditions(orders.join(product, col("product_id") == col("id"))._plan)
    assert split_join_conditions(once) is once


def test_outer_join_keys(orders, product):
    join = optimized(orders.left_outer_join(product, col("product_id") == col("id")))
    assert join.kind is JoinKind.LEFT
    assert join.equi_keys == (EquiKey("product_id", "id"),)


# -- where() merged into inner joins ----------------------------------------------------------
def test_where_after_a_cross_join_merges_into_the_join(orders, product):
    t = orders.join(product).where(col("product_id") == col("id"))
    assert isinstance(t._plan, Filter)
    plan = optimized(t)
    assert isinstance(plan, Join)
    assert plan.kind is JoinKind.INNER
    assert plan.equi_keys == (EquiKey("product_id", "id"),)
    assert plan.residual is None
    assert str(plan.condition) == "(product_id = id)"


def test_where_merges_with_an_existing_join_condition(orders, shipments):
    t = orders.join(shipments, col("order_id") == col("s_order_id")).where(
        col("o_rowtime").between(col("s_rowtime") - lit(4).hours, col("s_rowtime"))
    )
    plan = optimized(t)
    assert isinstance(plan, Join)
    assert plan.equi_keys == (EquiKey("order_id", "s_order_id"),)
    assert str(plan.residual) == "(o_rowtime BETWEEN (s_rowtime - INTERVAL '4' HOUR) AND s_rowtime)"
    assert str(plan.condition) == (
        "((order_id = s_order_id) AND (o_rowtime BETWEEN "
        "(s_rowtime - INTERVAL '4' HOUR) AND s_rowtime))"
    )


def test_where_is_not_merged_into_an_outer_join(orders, product):
    t = orders.left_outer_join(product, col("product_id") == col("id")).where(col("name").is_null)
    plan = optimized(t)
    assert isinstance(plan, Filter)
    assert isinstance(plan.input, Join)
    assert str(plan.input.condition) == "(product_id = id)"
    assert merge_filters_into_inner_joins(t._plan) is t._plan


# -- IN with a table -> semi join -------------------------------------------------------------
def test_in_table_becomes_a_left_semi_join(orders, product):
    t = orders.where(col("product_id").in_(product.select(col("id"))))
    plan = optimized(t)
    assert isinstance(plan, Join)
    assert plan.kind is JoinKind.SEMI
    # The left columns (a regular join's output has no time attributes, as in Flink).
    assert plan.row_type.names == orders.row_type.names
    (key,) = plan.equi_keys
    assert key.left == "product_id"
    assert key.right.startswith("__in_")
    assert isinstance(plan.right, Project)
    assert plan.right.names == (key.right,)
    assert plan.right.exprs[0].same_as(Column("id"))
    assert plan.right.input.table_names() == {"Product"}


def test_in_table_keeps_the_other_where_terms(orders, product):
    t = orders.where((col("amount") > 1) & col("product_id").in_(product.select(col("id"))))
    plan = in_subquery_to_semi_join(t._plan)
    assert isinstance(plan, Filter)
    assert str(plan.condition) == "(amount > 1)"
    assert isinstance(plan.input, Join) and plan.input.kind is JoinKind.SEMI


def test_two_in_tables_give_two_semi_joins(orders, product, shipments):
    t = orders.where(
        col("product_id").in_(product.select(col("id")))
        & col("order_id").in_(shipments.select(col("s_order_id")))
    )
    semis = [j for j in joins(optimized(t)) if j.kind is JoinKind.SEMI]
    assert len(semis) == 2
    assert {j.right.input.table_names().pop() for j in semis} == {"Product", "Shipments"}


def test_not_in_is_a_null_aware_anti_join(orders, product):
    # Flink's NOT IN: a row of the subquery equal to x, or a NULL comparison, removes x.
    plan = optimized(
        orders.where(~col("product_id").in_(product.select(col("name").cast("BIGINT"))))
    )
    assert isinstance(plan, Join) and plan.kind is JoinKind.ANTI
    assert not plan.equi_keys  # the OR keeps the condition whole
    inner = plan.right.names[0]
    assert str(plan.residual) == (f"((product_id = {inner}) OR ((product_id = {inner}) IS NULL))")


def test_not_in_without_nullable_columns_is_a_plain_anti_join(orders, product):
    # order_id is the primary key (NOT NULL) and so is Product.id: NOT IN = NOT EXISTS.
    plan = optimized(orders.where(~col("order_id").in_(product.select(col("id")))))
    assert isinstance(plan, Join) and plan.kind is JoinKind.ANTI
    (key,) = plan.equi_keys
    assert key.left == "order_id" and plan.residual is None


def test_multi_column_in_is_a_semi_join_on_every_column(orders, product):
    t = orders.where(
        row(col("product_id"), col("currency")).in_(product.select(col("id"), col("name")))
    )
    plan = optimized(t)
    assert isinstance(plan, Join) and plan.kind is JoinKind.SEMI
    assert [k.left for k in plan.equi_keys] == ["product_id", "currency"]
    assert plan.right.exprs[1].same_as(Column("name"))


def test_in_values_is_not_a_semi_join(orders):
    plan = optimized(orders.where(col("currency").in_("Euro", "Yen")))
    assert not joins(plan)


# -- hints ------------------------------------------------------------------------------------
def test_hint_attaches_to_the_join_reading_the_table_on_the_right(orders, product):
    t = orders.join(product, col("product_id") == col("id")).with_hint("BROADCAST", "Product")
    assert isinstance(t._plan, QueryHints)
    plan = optimized(t)
    assert isinstance(plan, Join)
    assert [(h.name, h.tables, side) for h, side in plan.hints] == [
        ("BROADCAST", ("Product",), "right")
    ]


def test_hint_attaches_on_the_left_side(orders, product):
    t = product.join(orders, col("id") == col("product_id")).with_hint("SHUFFLE_HASH", "Product")
    plan = optimized(t)
    assert [(h.name, side) for h, side in plan.hints] == [("SHUFFLE_HASH", "left")]


def test_hint_on_both_tables(orders, product):
    t = orders.join(product, col("product_id") == col("id")).with_hint(
        "SHUFFLE_MERGE", "Product", "Orders"
    )
    plan = optimized(t)
    assert sorted((str(h), side) for h, side in plan.hints) == [
        ("SHUFFLE_MERGE(Orders)", "left"),
        ("SHUFFLE_MERGE(Product)", "right"),
    ]


def test_hint_goes_to_the_join_whose_direct_input_reads_the_table(orders, product, shipments):
    t = (
        orders.join(product, col("product_id") == col("id"))
        .join(shipments, col("order_id") == col("s_order_id"))
        .with_hint("BROADCAST", "Product")
    )
    plan = optimized(t)
    outer = plan
    inner = plan.left
    assert isinstance(outer, Join) and isinstance(inner, Join)
    assert outer.hints == ()
    assert [(str(h), side) for h, side in inner.hints] == [("BROADCAST(Product)", "right")]


def test_hint_sees_through_projections_and_filters(orders, product):
    right = product.where(col("id") > 0).select(col("id"), col("name"))
    t = orders.join(right, col("product_id") == col("id")).with_hint("BROADCAST", "Product")
    plan = optimized(t)
    assert [side for _, side in plan.hints] == ["right"]
    assert direct_table(right._plan) == "Product"
    assert direct_table(orders.distinct()._plan) is None


def test_hint_options_are_kept(orders, product):
    t = orders.join(product, col("product_id") == col("id")).with_hint(
        "shuffle_hash", "Product", retries=3
    )
    ((hint, side),) = optimized(t).hints
    assert side == "right"
    assert hint.name == "SHUFFLE_HASH"
    assert hint.options == (("retries", "3"),)
    assert str(hint) == "SHUFFLE_HASH(Product, retries=3)"


def test_hint_on_a_table_read_but_not_directly_joined_gives_a_note(orders, product):
    t = orders.join(product.distinct(), col("product_id") == col("id")).with_hint(
        "BROADCAST", "Product"
    )
    result = t.optimized()
    assert all(j.hints == () for j in joins(result.plan))
    assert result.notes == ("hint BROADCAST(Product) applies to no join of this query: ignored",)
    assert not any(isinstance(n, QueryHints) for n in result.plan.walk())


def test_hint_on_a_query_without_joins_gives_a_note(product):
    plan, notes = propagate_hints(product.with_hint("BROADCAST", "Product")._plan)
    assert isinstance(plan, Scan)
    assert notes == ["hint BROADCAST(Product) applies to no join of this query: ignored"]


def test_hint_is_noted_per_table(orders, product):
    t = orders.join(product.distinct(), col("product_id") == col("id")).with_hint(
        "BROADCAST", "Product", "Orders"
    )
    result = t.optimized()
    assert [side for _, side in joins(result.plan)[0].hints] == ["left"]
    assert result.notes == ("hint BROADCAST(Product) applies to no join of this query: ignored",)


# -- the pipeline -----------------------------------------------------------------------------
def test_optimize_does_not_change_the_logical_plan(orders, product):
    t = orders.join(product).where(col("product_id") == col("id"))
    before = [type(n).__name__ for n in t._plan.walk()]
    t.optimized()
    assert [type(n).__name__ for n in t._plan.walk()] == before
    assert t._plan.input.equi_keys is None


def test_a_filter_over_a_window_tvf_runs_before_it() -> None:
    """WHERE on the input's columns between a window TVF and its window aggregation (or window
    join) is pushed below the TVF, as Flink plans a Calc under its WindowAggregate; a filter
    on a window column stays where it is (and streaming refuses that TVF, saying why)."""
    senv = TableEnvironment.create(mode="streaming")
    senv.execute_sql(
        "CREATE TABLE E (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
        "WITH ('connector' = 'filesystem', 'path' = '/nonexistent/e', 'format' = 'json')"
    )
    tvf = "TABLE(TUMBLE(TABLE E, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
    q = senv.sql_query(
        f"SELECT window_start, window_end, k, SUM(v) AS s FROM {tvf} "
        "WHERE k <> 'x' AND v > 0 GROUP BY window_start, window_end, k"
    )
    plan = q.explain().split("== Optimized Physical Plan ==")[1]
    assert "WindowAggregate(groupBy=[k]" in plan
    assert "Calc(select=[k, v, ts], where=[((k <> 'x') AND (v > 0))]" in plan
    on_window = senv.sql_query(
        f"SELECT window_start, window_end, k, SUM(v) AS s FROM {tvf} "
        "WHERE window_start > TIMESTAMP '2026-01-01 00:00:00' GROUP BY window_start, window_end, k"
    )
    with pytest.raises(ValidationError, match=r"window TVF \(TUMBLE\) in streaming mode runs"):
        on_window.explain()
