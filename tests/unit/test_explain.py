"""``Table.explain()``: the logical and optimized plans, Flink style (no server needed)."""

from __future__ import annotations

import pytest

from tableapi import col, lit
from tableapi.plan.explain import input_spec

ORDERS_SCAN = (
    "TableSourceScan(table=[[default_catalog, default_database, Orders]], "
    "fields=[order_id, product_id, amount, currency, o_rowtime])"
)
ORDERS_CALC = (
    "Calc(select=[order_id, product_id, amount, currency, o_rowtime, "
    "PROCTIME() AS o_proctime, (amount * 2) AS amount_x2])"
)
PRODUCT_SCAN = (
    "TableSourceScan(table=[[default_catalog, default_database, Product]], fields=[id, name])"
)
SHIPMENTS_SCAN = (
    "TableSourceScan(table=[[default_catalog, default_database, Shipments]], "
    "fields=[s_order_id, s_rowtime])"
)
ORDERS_SELECT = "order_id, product_id, amount, currency, o_rowtime, o_proctime, amount_x2"


@pytest.fixture
def orders(catalog):
    return catalog.from_path("Orders")


@pytest.fixture
def product(catalog):
    return catalog.from_path("Product")


@pytest.fixture
def shipments(catalog):
    return catalog.from_path("Shipments")


def sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("== ") and line.endswith(" =="):
            current = line.strip("= ")
            out[current] = []
        elif line and current is not None:
            out[current].append(line)
    return out


def test_regular_join(orders, product):
    text = (
        orders.join(product, col("product_id") == col("id"))
        .select(col("order_id"), col("name"))
        .explain()
    )
    assert text.startswith("== Abstract Syntax Tree ==\n")
    s = sections(text)
    assert list(s) == ["Abstract Syntax Tree", "Optimized Physical Plan"]
    assert s["Abstract Syntax Tree"] == [
        "LogicalProject(order_id=[order_id], name=[name])",
        "+- LogicalJoin(condition=[(product_id = id)], joinType=[inner])",
        "   :- LogicalTableScan(table=[[default_catalog, default_database, Orders]])",
        "   +- LogicalTableScan(table=[[default_catalog, default_database, Product]])",
    ]
    assert s["Optimized Physical Plan"] == [
        "Calc(select=[order_id, name])",
        "+- Join(joinType=[InnerJoin], where=[(product_id = id)], "
        f"select=[{ORDERS_SELECT}, id, name], leftKeys=[product_id], rightKeys=[id], "
        "leftInputSpec=[HasUniqueKey], rightInputSpec=[JoinKeyContainsUniqueKey])",
        "   :- " + ORDERS_CALC,
        "   :  +- " + ORDERS_SCAN,
        "   +- " + PRODUCT_SCAN,
    ]


def test_join_type_and_keys_appear(orders, product):
    text = orders.join(product, col("product_id") == col("id")).explain()
    assert "== Optimized Physical Plan ==" in text
    assert "Join(joinType=[InnerJoin]" in text
    assert "leftKeys=[product_id], rightKeys=[id]" in text


@pytest.mark.parametrize(
    ("method", "join_type", "logical"),
    [
        ("left_outer_join", "LeftOuterJoin", "left"),
        ("right_outer_join", "RightOuterJoin", "right"),
        ("full_outer_join", "FullOuterJoin", "full"),
        ("semi_join", "LeftSemiJoin", "left_semi"),
        ("anti_join", "LeftAntiJoin", "left_anti"),
    ],
)
def test_join_kinds(orders, product, method, join_type, logical):
    text = getattr(orders, method)(product, col("product_id") == col("id")).explain()
    assert f"LogicalJoin(condition=[(product_id = id)], joinType=[{logical}])" in text
    assert f"Join(joinType=[{join_type}], where=[(product_id = id)]" in text


def test_input_specs(orders, product, shipments):
    # Orders' key order_id is the join key; Shipments has no key
    text = orders.join(shipments, col("order_id") == col("s_order_id")).explain()
    assert "leftInputSpec=[JoinKeyContainsUniqueKey], rightInputSpec=[NoUniqueKey]" in text
    # Product's key id is the join key; Orders has a key (order_id) that is not the join key
    text = product.join(orders, col("id") == col("product_id")).explain()
    assert "leftInputSpec=[JoinKeyContainsUniqueKey], rightInputSpec=[HasUniqueKey]" in text


def test_input_spec_of_elements_tables_without_keys(env):
    left = env.from_elements([(1, "a")], ["a", "b"])
    right = env.from_elements([(1, "c")], ["c", "d"])
    text = left.join(right, col("a") == col("c")).explain()
    assert "leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey]" in text


def test_input_spec_of_an_aggregate_is_its_group_key(orders, product):
    totals = orders.group_by(col("product_id")).select(
        col("product_id"), col("amount").sum.alias("total")
    )
    text = totals.join(product, col("product_id") == col("id")).explain()
    assert (
        "leftInputSpec=[JoinKeyContainsUniqueKey], rightInputSpec=[JoinKeyContainsUniqueKey]"
        in text
    )
    assert "GroupAggregate(groupBy=[product_id], select=[product_id, SUM(amount) AS $agg0])" in text


def test_a_key_dropped_by_a_projection_is_no_key(orders, product):
    narrow = orders.select(col("product_id"), col("amount"))
    text = narrow.join(product, col("product_id") == col("id")).explain()
    assert "leftInputSpec=[NoUniqueKey]" in text


def test_a_key_renamed_by_select_stays_a_key(orders, product):
    renamed = orders.select(col("order_id").alias("oid"), col("product_id"))
    assert renamed._plan.unique_keys == (("oid",),)
    text = renamed.join(product, col("oid") == col("id")).explain()
    assert (
        "leftInputSpec=[JoinKeyContainsUniqueKey], rightInputSpec=[JoinKeyContainsUniqueKey]"
        in text
    )
    assert "LogicalProject(oid=[order_id], product_id=[product_id])" in text
    assert "Calc(select=[order_id AS oid, product_id])" in text


def test_input_spec_function(orders, product):
    assert input_spec(product._plan, ("id",)) == "JoinKeyContainsUniqueKey"
    assert input_spec(product._plan, ("id", "name")) == "JoinKeyContainsUniqueKey"
    assert input_spec(product._plan, ("name",)) == "HasUniqueKey"
    assert input_spec(product.distinct()._plan, ("id",)) == "HasUniqueKey"
    assert (
        input_spec(orders.where(col("amount") > 1)._plan, ("order_id",))
        == "JoinKeyContainsUniqueKey"
    )


def test_residual_and_interval_condition(orders, shipments):
    text = (
        orders.join(shipments)
        .where(
            (col("order_id") == col("s_order_id"))
            & col("o_rowtime").between(col("s_rowtime") - lit(4).hours, col("s_rowtime"))
        )
        .explain()
    )
    s = sections(text)
    assert s["Abstract Syntax Tree"][:2] == [
        "LogicalFilter(condition=[((order_id = s_order_id) AND (o_rowtime BETWEEN "
        "(s_rowtime - INTERVAL '4' HOUR) AND s_rowtime))])",
        "+- LogicalJoin(condition=[true], joinType=[inner])",
    ]
    top = s["Optimized Physical Plan"][0]
    assert top.startswith("Join(joinType=[InnerJoin], ")
    assert "leftKeys=[order_id], rightKeys=[s_order_id]" in top
    assert top.endswith(
        "nonEquiCondition=[(o_rowtime BETWEEN (s_rowtime - INTERVAL '4' HOUR) AND s_rowtime)])"
    )
    assert s["Optimized Physical Plan"][-1] == "+- " + SHIPMENTS_SCAN


def test_join_without_equi_keys(orders, product):
    text = orders.join(product, col("product_id") > col("id")).explain()
    assert "equiKeys=[] (no equi key: a single partition joins all rows)" in text
    assert "leftKeys" not in text
    assert "nonEquiCondition" not in text
    cross = orders.join(product).explain()
    assert "LogicalJoin(condition=[true], joinType=[inner])" in cross
    assert "Join(joinType=[InnerJoin], where=[true]" in cross


def test_calc_and_scan_lines(orders):
    text = (
        orders.where(col("amount") > 10)
        .select(col("order_id"), (col("amount") * 3).alias("a3"))
        .explain()
    )
    s = sections(text)
    assert s["Abstract Syntax Tree"] == [
        "LogicalProject(order_id=[order_id], a3=[(amount * 3)])",
        "+- LogicalFilter(condition=[(amount > 10)])",
        "   +- LogicalTableScan(table=[[default_catalog, default_database, Orders]])",
    ]
    assert s["Optimized Physical Plan"] == [
        "Calc(select=[order_id, (amount * 3) AS a3])",
        f"+- Calc(select=[{ORDERS_SELECT}], where=[(amount > 10)])",
        "   +- " + ORDERS_CALC,
        "      +- " + ORDERS_SCAN,
    ]


def test_other_operators(orders):
    t = (
        orders.group_by(col("currency"))
        .select(col("currency"), col("amount").sum.alias("t"))
        .order_by(col("t").desc)
        .limit(3, 1)
    )
    s = sections(t.explain())
    assert s["Abstract Syntax Tree"][:3] == [
        "LogicalSort(offset=[1], fetch=[3])",
        "+- LogicalSort(sort=[t DESC])",
        "   +- LogicalProject(currency=[currency], t=[$agg0])",
    ]
    assert (
        "LogicalAggregate(group=[{currency}], $agg0=[SUM(amount)])" in s["Abstract Syntax Tree"][3]
    )
    assert s["Optimized Physical Plan"][:4] == [
        "Limit(offset=[1], fetch=[3])",
        "+- Sort(orderBy=[t DESC])",
        "   +- Calc(select=[currency, $agg0 AS t])",
        "      +- GroupAggregate(groupBy=[currency], select=[currency, SUM(amount) AS $agg0])",
    ]


def test_union_and_distinct(product):
    t = product.union(product.select(col("id"), col("name")))
    s = sections(t.explain())
    assert s["Abstract Syntax Tree"][0] == "LogicalUnion(all=[false])"
    assert s["Optimized Physical Plan"][0] == "Union(all=[false], union=[id, name])"
    assert "Union(all=[true]" in product.union_all(product).explain()
    d = sections(product.distinct().explain())
    assert d["Abstract Syntax Tree"][0] == "LogicalAggregate(group=[{id, name}])"
    assert (
        d["Optimized Physical Plan"][0] == "GroupAggregate(groupBy=[id, name], select=[id, name])"
    )


def test_hints(orders, product):
    text = (
        orders.join(product, col("product_id") == col("id"))
        .with_hint("BROADCAST", "Product")
        .explain()
    )
    s = sections(text)
    assert s["Abstract Syntax Tree"][0] == "LogicalHints(hints=[BROADCAST(Product)])"
    top = s["Optimized Physical Plan"][0]
    assert top.endswith("hints=[[BROADCAST right:Product]])")
    assert "Planner Notes" not in s


def test_hints_on_both_sides(orders, product):
    text = (
        orders.join(product, col("product_id") == col("id"))
        .with_hint("SHUFFLE_HASH", "Orders", "Product")
        .explain()
    )
    assert "hints=[[SHUFFLE_HASH left:Orders], [SHUFFLE_HASH right:Product]]" in text


def test_hint_that_applies_to_no_join_gives_a_planner_note(orders, product):
    text = (
        orders.join(product.distinct(), col("product_id") == col("id"))
        .with_hint("BROADCAST", "Product")
        .explain()
    )
    s = sections(text)
    assert list(s) == ["Abstract Syntax Tree", "Optimized Physical Plan", "Planner Notes"]
    assert s["Planner Notes"] == [
        "hint BROADCAST(Product) applies to no join of this query: ignored"
    ]
    assert "hints=" not in "\n".join(s["Optimized Physical Plan"])


def test_in_table_explains_as_a_semi_join(orders, product):
    text = orders.where(col("product_id").in_(product.select(col("id")))).explain()
    s = sections(text)
    assert s["Abstract Syntax Tree"][0] == "LogicalFilter(condition=[(product_id IN <table id>)])"
    top = s["Optimized Physical Plan"][0]
    assert top.startswith("Join(joinType=[LeftSemiJoin], where=[(product_id = __in_")
    assert f"select=[{ORDERS_SELECT}]" in top
    assert "rightInputSpec=[JoinKeyContainsUniqueKey]" in top


def test_explain_never_connects(orders, product):
    orders.join(product, col("product_id") == col("id")).explain()
    assert orders._env._spark is None


def test_an_upsert_sink_shows_the_nodes_whose_update_before_rows_are_dropped() -> None:
    """Flink's update-kind inference in explain: an aggregate feeding a jdbc sink keyed by
    its group key emits no -U rows (``[I,UA,D]``); the same query as a result does
    (``[I,UB,UA,D]``)."""
    from tableapi import TableEnvironment

    env = TableEnvironment.create(mode="streaming")
    env.execute_sql(
        "CREATE TABLE T (k STRING, v INT) WITH ('connector' = 'filesystem', "
        "'path' = '/nonexistent/t', 'format' = 'json', 'changelog.op-column' = 'op')"
    )
    env.execute_sql(
        "CREATE TABLE Keyed (k STRING NOT NULL, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH "
        "('connector' = 'jdbc', 'url' = 'jdbc:sqlite:/nonexistent/out.db', 'table-name' = 'out')"
    )
    query = "SELECT k, COUNT(*) AS n FROM T GROUP BY k"

    def aggregate_line(text: str) -> str:
        plan = sections(text)["Optimized Physical Plan"]
        return next(line for line in plan if "GroupAggregate(" in line)

    keyed = str(env.execute_sql(f"EXPLAIN INSERT INTO Keyed {query}").collect()[0][0])
    assert "changelogMode=[I,UA,D]" in aggregate_line(keyed)
    # the scan still retracts: the aggregate needs its -U rows
    assert "changelogMode=[I,UB,UA,D]" in next(
        line for line in sections(keyed)["Optimized Physical Plan"] if "TableSourceScan" in line
    )
    assert "changelogMode=[I,UB,UA,D]" in aggregate_line(env.sql_query(query).explain())
    plain = env.sql_query(query).explain(sink="Keyed")
    assert "changelogMode=[I,UA,D]" in aggregate_line(plain)
