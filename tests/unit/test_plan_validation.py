"""Every table operation validates at once and names the bad column and the ones that exist."""

from __future__ import annotations

import pytest

from tableapi import Schema, TableEnvironment, ValidationError, call, col, lit, row, udf
from tableapi.plan import ElementsSource, Project, Scan
from tableapi.table import Table
from tableapi.types import BIGINT, RowType

ORDER_COLS = r"\[order_id, product_id, amount, currency\]"


@pytest.fixture
def orders(env):
    return env.from_elements(
        [(1, 10, 5, "Euro"), (2, 20, 7, "US Dollar")],
        ["order_id", "product_id", "amount", "currency"],
    )


@pytest.fixture
def products(env):
    return env.from_elements([(10, "pen"), (20, "ink")], ["id", "name"])


# -- environment and catalog ------------------------------------------------------------------
def test_create_does_not_connect():
    env = TableEnvironment.create(mode="batch")
    assert env.mode == "batch"
    assert env._spark is None


def test_unknown_mode():
    with pytest.raises(
        ValidationError,
        match=r"Unknown mode 'micro'; use one of \['batch', "
        r"'streaming'\]",
    ):
        TableEnvironment.create(mode="micro")


def test_from_path_of_an_unknown_table_lists_registered_tables(catalog):
    with pytest.raises(
        ValidationError,
        match=r"Table 'Order' not found in default_catalog\.default_database; tables and "
        r"views: Orders, Product, Shipments\. Create it with CREATE TABLE, create_table\(\) or "
        r"create_temporary_table\(\)",
    ):
        catalog.from_path("Order")


def test_from_path_with_an_empty_catalog(env):
    with pytest.raises(
        ValidationError,
        match=r"Table 'Orders' not found in default_catalog\.default_database; tables and "
        r"views: \(none\)",
    ):
        env.from_path("Orders")


def test_registering_a_table_twice(catalog):
    descriptor = catalog.descriptor("Orders")
    with pytest.raises(
        ValidationError,
        match=r"Temporary table `default_catalog`\.`default_database`\.`Orders` exists "
        r"already: drop it first with DROP TEMPORARY TABLE or drop_temporary_table\('Orders'\)",
    ):
        catalog.create_temporary_table("Orders", descriptor)
    assert catalog.drop_temporary_table("Orders") is True
    assert catalog.drop_temporary_table("Orders") is False
    catalog.create_temporary_table("Orders", descriptor)
    assert catalog.list_tables() == ["Orders", "Product", "Shipments"]


def test_create_temporary_table_needs_a_descriptor(env):
    with pytest.raises(
        ValidationError,
        match=r"create_temporary_table\(\) needs a "
        r"TableDescriptor \(\.build\(\)\)",
    ):
        env.create_temporary_table("T", Schema.new_builder().column("a", "INT").build())


def test_from_path_shows_all_schema_columns(catalog):
    orders = catalog.from_path("Orders")
    assert orders.column_names == (
        "order_id",
        "product_id",
        "amount",
        "currency",
        "o_rowtime",
        "o_proctime",
        "amount_x2",
    )
    assert str(orders.row_type.field("o_rowtime").type) == "TIMESTAMP(3) *ROWTIME*"


def test_from_elements_infers_types(env):
    t = env.from_elements([(1, "Euro", 1.5, True)], ["id", "currency", "rate", "ok"])
    assert str(t.row_type) == "(id BIGINT, currency STRING, rate DOUBLE, ok BOOLEAN)"


def test_from_elements_default_names(env):
    assert env.from_elements([(1, "a")]).column_names == ("f0", "f1")


def test_from_elements_with_a_ddl_schema(env):
    t = env.from_elements([(1, "a")], "id INT, name STRING")
    assert str(t.row_type) == "(id INT, name STRING)"


def test_from_elements_with_a_ddl_schema_of_parameterized_types(env):
    t = env.from_elements([(1, 2)], "id BIGINT, price DECIMAL(10, 2)")
    assert str(t.row_type) == "(id BIGINT, price DECIMAL(10, 2))"


def test_from_elements_with_a_bad_ddl_schema(env):
    with pytest.raises(
        ValidationError,
        match=r"Cannot read 'id' in schema 'id, name STRING': "
        r"write 'name TYPE'",
    ):
        env.from_elements([(1, "a")], "id, name STRING")


def test_from_elements_with_a_row_of_the_wrong_width(env):
    with pytest.raises(
        ValidationError,
        match=r"Row 1 has 1 values but the schema has 2 columns "
        r"\[id, name\]",
    ):
        env.from_elements([(1, "a"), (2,)], ["id", "name"])
    with pytest.raises(ValidationError, match=r"Row 0 has 3 values but the schema has 2 columns"):
        env.from_elements([(1, "a", "x")], "id INT, name STRING")


def test_from_elements_cannot_infer_an_all_null_column(env):
    with pytest.raises(
        ValidationError,
        match=r"Cannot infer the type of column 'name': it has no "
        r"non-NULL value\. Give a schema such as",
    ):
        env.from_elements([(1, None), (2, None)], ["id", "name"])


def test_from_elements_null_column_with_a_schema(env):
    t = env.from_elements([(1, None)], "id BIGINT, name STRING")
    assert t.column_names == ("id", "name")


def test_from_elements_with_an_unsupported_value(env):
    with pytest.raises(ValidationError, match="of Python type list as a literal"):
        env.from_elements([([1, 2],)], ["xs"])


def test_tables_of_two_environments_do_not_mix(env, orders):
    other = TableEnvironment.create(mode="batch").from_elements([(1,)], ["x"])
    message = "Both tables must come from the same TableEnvironment"
    with pytest.raises(ValidationError, match=message):
        orders.join(other)
    with pytest.raises(ValidationError, match=message):
        orders.union_all(
            other.select(col("x"), col("x").alias("y"), col("x").alias("z"), col("x").alias("w"))
        )
    with pytest.raises(ValidationError, match="Expected a Table, got str"):
        orders.join("Product")


# -- select / where / columns -----------------------------------------------------------------
def test_select_of_a_missing_column_lists_available_columns(orders):
    with pytest.raises(
        ValidationError,
        match=r"Column 'price' not found in select\(\)\. "
        r"Available columns: " + ORDER_COLS,
    ):
        orders.select(col("order_id"), col("price"))


def test_select_suggests_the_right_case(orders):
    with pytest.raises(
        ValidationError,
        match=r"Did you mean 'amount'\? Column names are "
        r"case-sensitive",
    ):
        orders.select(col("Amount"))


def test_select_by_name_strings_and_expression_names(orders):
    t = orders.select("order_id", (col("amount") * 2).alias("double"), col("amount") + 1)
    assert t.column_names == ("order_id", "double", "EXPR$2")
    assert str(t.row_type) == "(order_id BIGINT, double BIGINT, EXPR$2 BIGINT)"


def test_select_needs_an_expression(orders):
    with pytest.raises(ValidationError, match=r"select\(\) needs at least one expression"):
        orders.select()


def test_select_of_an_unknown_function(orders):
    with pytest.raises(
        ValidationError,
        match=r"Unknown function 'my_func'\. Registered functions: "
        r"\[\]; register it with "
        r"create_temporary_function\('my_func'",
    ):
        orders.select(call("my_func", col("amount")))


def test_registered_function_is_resolved(env, orders):
    env.create_temporary_function("Twice", udf(lambda x: 2 * x, result_type="BIGINT", name="twice"))
    t = orders.select(call("twice", col("amount")).alias("t"))
    assert str(t.row_type) == "(t BIGINT)"
    with pytest.raises(
        ValidationError,
        match=r"create_temporary_function\(\) takes "
        r"udf\(python_function",
    ):
        env.create_temporary_function("f", lambda x: x)


def test_where_with_a_non_boolean_condition(orders):
    with pytest.raises(
        ValidationError,
        match=r"where\(\) needs a BOOLEAN condition; \(amount \+ "
        r"1\) is BIGINT",
    ):
        orders.where(col("amount") + 1)


def test_where_with_a_missing_column(orders):
    with pytest.raises(
        ValidationError,
        match=r"Column 'price' not found in where\(\)\. Available "
        r"columns: " + ORDER_COLS,
    ):
        orders.where(col("price") > 1)


def test_where_with_an_aggregate(orders):
    with pytest.raises(
        ValidationError,
        match=r"where\(\) cannot contain an aggregate "
        r"\(\(SUM\(amount\) > 10\)\); filter the result of "
        r"group_by",
    ):
        orders.where(col("amount").sum > 10)


def test_where_keeps_the_columns(orders):
    t = orders.where((col("amount") > 5) & col("currency").in_("Euro", "Yen"))
    assert t.row_type == orders.row_type


def test_duplicate_output_names(orders):
    with pytest.raises(
        ValidationError,
        match=r"Duplicate output column name\(s\) \['amount'\]: "
        r"give each column a distinct name with "
        r"\.alias\(\.\.\.\)",
    ):
        orders.select(col("amount"), col("order_id").alias("amount"))


def test_aggregate_next_to_a_plain_column_in_select(orders):
    with pytest.raises(
        ValidationError,
        match=r"Column\(s\) \['amount'\] in amount are neither "
        r"grouped nor aggregated",
    ):
        orders.select(col("amount"), col("amount").sum)


def test_add_columns(orders):
    t = orders.add_columns((col("amount") * 2).alias("double"))
    assert t.column_names == ("order_id", "product_id", "amount", "currency", "double")


def test_add_columns_of_an_existing_column(orders):
    with pytest.raises(
        ValidationError,
        match=r"add_columns\(\): column\(s\) \['amount'\] exist "
        r"already; use add_or_replace_columns\(\)",
    ):
        orders.add_columns((col("amount") + 1).alias("amount"))


def test_add_or_replace_columns(orders):
    t = orders.add_or_replace_columns((col("amount") + 1.5).alias("amount"), lit(1).alias("one"))
    assert t.column_names == ("order_id", "product_id", "amount", "currency", "one")
    assert str(t.row_type.field("amount").type) == "DOUBLE"


def test_rename_columns(orders):
    t = orders.rename_columns(col("amount").alias("amt"), col("currency").alias("cur"))
    assert t.column_names == ("order_id", "product_id", "amt", "cur")


@pytest.mark.parametrize("term", [col("amount"), (col("amount") + 1).alias("x"), col("a") + 1])
def test_rename_columns_with_a_bad_term(orders, term):
    with pytest.raises(
        ValidationError,
        match=r"rename_columns\(\) takes "
        r"col\('old'\)\.alias\('new'\) terms; got ",
    ):
        orders.rename_columns(term)


def test_rename_columns_of_a_missing_column(orders):
    with pytest.raises(
        ValidationError,
        match=r"Column 'price' not found in rename_columns\(\)\. "
        r"Available columns: " + ORDER_COLS,
    ):
        orders.rename_columns(col("price").alias("p"))


def test_rename_columns_onto_an_existing_name(orders):
    with pytest.raises(ValidationError, match=r"Duplicate output column name\(s\) \['currency'\]"):
        orders.rename_columns(col("amount").alias("currency"))


def test_drop_columns(orders):
    assert orders.drop_columns(col("amount"), "currency").column_names == ("order_id", "product_id")


def test_drop_columns_of_a_missing_column(orders):
    with pytest.raises(
        ValidationError,
        match=r"Column 'price' not found in drop_columns\(\)\. "
        r"Available columns: " + ORDER_COLS,
    ):
        orders.drop_columns(col("price"))


def test_drop_columns_needs_column_references(orders):
    with pytest.raises(
        ValidationError,
        match=r"drop_columns\(\) takes column references; got "
        r"\(amount \+ 1\)",
    ):
        orders.drop_columns(col("amount") + 1)


def test_alias(orders):
    assert orders.alias("a", "b", "c", "d").column_names == ("a", "b", "c", "d")


def test_alias_with_the_wrong_count(orders):
    with pytest.raises(
        ValidationError, match=r"alias\(\) needs 4 names for columns " + ORDER_COLS + r", got 2\."
    ):
        orders.alias("a", "b")


def test_order_by_of_a_missing_column(orders):
    with pytest.raises(ValidationError, match=r"Column 'price' not found in order_by\(\)"):
        orders.order_by(col("price").desc)


@pytest.mark.parametrize(("fetch", "offset"), [(-1, 0), (1, -2)])
def test_limit_with_negative_counts(orders, fetch, offset):
    with pytest.raises(
        ValidationError,
        match=r"limit\(\) and offset\(\) need non-negative row "
        r"counts",
    ):
        orders.limit(fetch, offset)


def test_offset_with_a_negative_count(orders):
    with pytest.raises(ValidationError, match="need non-negative row counts"):
        orders.offset(-1)
    assert orders.fetch(0).row_type == orders.row_type


# -- group by ---------------------------------------------------------------------------------
def test_group_by_select(orders):
    t = orders.group_by(col("currency")).select(
        col("currency"), col("amount").sum.alias("total"), col("amount").count
    )
    assert t.column_names == ("currency", "total", "EXPR$2")
    assert str(t.row_type) == "(currency STRING, total BIGINT, EXPR$2 BIGINT NOT NULL)"


def test_group_by_select_with_a_non_grouped_column(orders):
    with pytest.raises(
        ValidationError,
        match=r"Column\(s\) \['amount'\] in amount are neither "
        r"grouped nor aggregated; add them to group_by\(\) "
        r"or wrap them in an aggregate such as \.max\. "
        r"Group keys: \[currency\]\.",
    ):
        orders.group_by(col("currency")).select(col("currency"), col("amount"))


def test_group_by_a_missing_column(orders):
    with pytest.raises(ValidationError, match=r"Column 'price' not found in group_by\(\)"):
        orders.group_by(col("price")).select(col("price"))


def test_group_by_an_expression(orders):
    t = orders.group_by(col("amount") % 2).select(
        (col("amount") % 2).alias("parity"), col("order_id").max.alias("last")
    )
    assert str(t.row_type) == "(parity BIGINT, last BIGINT)"


def test_global_aggregate(orders):
    t = orders.select(col("amount").sum.alias("total"), col("amount").avg)
    assert str(t.row_type) == "(total BIGINT, EXPR$1 BIGINT)"  # Flink: AVG(BIGINT) is BIGINT


# -- joins ------------------------------------------------------------------------------------
def test_join_row_type(orders, products):
    t = orders.join(products, col("product_id") == col("id"))
    assert t.column_names == ("order_id", "product_id", "amount", "currency", "id", "name")


def test_outer_joins_make_the_outer_side_nullable(env):
    left = env.from_elements([(1,)], "a BIGINT NOT NULL")
    right = env.from_elements([(1,)], "b BIGINT NOT NULL")
    cond = col("a") == col("b")
    assert str(left.join(right, cond).row_type) == "(a BIGINT NOT NULL, b BIGINT NOT NULL)"
    assert str(left.left_outer_join(right, cond).row_type) == "(a BIGINT NOT NULL, b BIGINT)"
    assert str(left.right_outer_join(right, cond).row_type) == "(a BIGINT, b BIGINT NOT NULL)"
    assert str(left.full_outer_join(right, cond).row_type) == "(a BIGINT, b BIGINT)"
    assert str(left.semi_join(right, cond).row_type) == "(a BIGINT NOT NULL)"
    assert str(left.anti_join(right, cond).row_type) == "(a BIGINT NOT NULL)"


def test_join_with_a_column_name_on_both_sides(env, orders):
    priced = env.from_elements([(10, "pen", 3)], ["id", "name", "amount"])
    with pytest.raises(ValidationError) as info:
        orders.join(priced, col("product_id") == col("id"))
    message = str(info.value)
    assert "Column(s) ['amount'] exist on both sides of the join. Rename one side first" in message
    assert "right.rename_columns(col('amount').alias('r_amount'))" in message
    assert "left columns: [order_id, product_id, amount, currency]" in message
    assert "right columns: [id, name, amount]" in message


def test_renaming_resolves_the_clash(env, orders):
    priced = env.from_elements([(10, "pen", 3)], ["id", "name", "amount"])
    t = orders.join(
        priced.rename_columns(col("amount").alias("r_amount")), col("product_id") == col("id")
    )
    assert "r_amount" in t.column_names


def test_semi_join_allows_shared_names_outside_the_condition(env, orders):
    priced = env.from_elements([(10, "pen", 3)], ["id", "name", "amount"])
    t = orders.semi_join(priced, col("product_id") == col("id"))
    assert t.column_names == ("order_id", "product_id", "amount", "currency")
    with pytest.raises(
        ValidationError,
        match=r"Column\(s\) \['amount'\] in the join condition "
        r"exist on both sides",
    ):
        orders.semi_join(priced, col("amount") == col("id"))


def test_join_condition_with_a_missing_column(orders, products):
    with pytest.raises(
        ValidationError,
        match=r"Column 'pid' not found in the join condition\. "
        r"Available columns: \[order_id, product_id, amount, "
        r"currency, id, name\]",
    ):
        orders.join(products, col("pid") == col("id"))


def test_non_boolean_join_condition(orders, products):
    with pytest.raises(
        ValidationError,
        match=r"A join condition must be BOOLEAN; \(product_id \+ "
        r"id\) is BIGINT",
    ):
        orders.join(products, col("product_id") + col("id"))


def test_join_condition_of_incompatible_types(orders, products):
    with pytest.raises(ValidationError, match=r"EQUALS needs operands of comparable types"):
        orders.left_outer_join(products, col("currency") == col("id"))


def test_join_condition_with_an_aggregate(orders, products):
    with pytest.raises(ValidationError, match=r"A join condition cannot aggregate"):
        orders.join(products, col("product_id").max == col("id"))


# -- union ------------------------------------------------------------------------------------
def test_union_with_different_widths(orders, products):
    with pytest.raises(
        ValidationError,
        match=r"union needs the same number of columns on both "
        r"sides: left " + ORDER_COLS + r", right \[id, name\]",
    ):
        orders.union_all(products)


def test_union_with_incompatible_types(env, products):
    other = env.from_elements([("x", "y")], ["a", "b"])
    with pytest.raises(
        ValidationError,
        match=r"union column 'id' is BIGINT on the left but "
        r"STRING on the right; cast one side",
    ):
        products.union(other)


def test_union_widens_types_and_keeps_left_names(env):
    left = env.from_elements([(1, "a")], "id INT, name STRING")
    right = env.from_elements([(1.5, "b")], ["x", "y"])
    assert str(left.union_all(right).row_type) == "(id DOUBLE, name STRING)"


# -- hints ------------------------------------------------------------------------------------
def test_with_hint_unknown_name(catalog):
    t = catalog.from_path("Orders").join(
        catalog.from_path("Product"), col("product_id") == col("id")
    )
    with pytest.raises(
        ValidationError,
        match=r"Unknown hint 'FAST'\. Known hints: \['BROADCAST', "
        r"'SHUFFLE_HASH', 'SHUFFLE_MERGE', 'MERGE', "
        r"'SHUFFLE_REPLICATE_NL', 'STATE_TTL', 'LOOKUP'\]",
    ):
        t.with_hint("FAST", "Product")


def test_with_hint_needs_a_table(catalog):
    with pytest.raises(ValidationError, match="Hint BROADCAST needs the name of the table"):
        catalog.from_path("Orders").with_hint("broadcast")


def test_with_hint_naming_a_table_the_query_does_not_read(catalog):
    t = catalog.from_path("Orders").join(
        catalog.from_path("Product"), col("product_id") == col("id")
    )
    with pytest.raises(
        ValidationError,
        match=r"Hint SHUFFLE_HASH names table 'Shipments', but "
        r"this query reads only \[Orders, Product\]",
    ):
        t.with_hint("shuffle_hash", "Shipments")


def test_with_hint_accepts_a_table_that_reads_one_table(catalog):
    product = catalog.from_path("Product")
    t = catalog.from_path("Orders").join(product, col("product_id") == col("id"))
    assert t.with_hint("BROADCAST", product.select(col("id")))._plan.hints[0].tables == ("Product",)
    with pytest.raises(ValidationError, match=r"got a Table that reads \[Orders, Product\]"):
        t.with_hint("BROADCAST", t)


# -- IN with a table --------------------------------------------------------------------------
def test_in_with_a_two_column_table(orders, products):
    with pytest.raises(
        ValidationError,
        match=r"in_\(table\) needs a table with exactly one "
        r"column; it has \[id, name\]\. select\(\) the "
        r"column first",
    ):
        orders.where(col("product_id").in_(products))


def test_in_with_a_table_of_an_incompatible_type(orders, products):
    with pytest.raises(ValidationError, match=r"IN needs operands of comparable types"):
        orders.where(col("currency").in_(products.select(col("id"))))


def test_in_with_a_table_nested_under_or(orders, products):
    ids = products.select(col("id"))
    with pytest.raises(
        ValidationError,
        match=r"IN with a table is supported only as a top-level "
        r"AND term of where\(\); found it inside \(\("
        r"product_id IN <table id>\) OR \(amount > 1\)\)",
    ):
        orders.where(col("product_id").in_(ids) | (col("amount") > 1))


def test_not_in_with_a_table_nested_under_or(orders, products):
    # NOT IN is a top-level term (a null-aware anti join, issue 11); under OR it is refused.
    ids = products.select(col("id"))
    with pytest.raises(ValidationError, match="supported only as a top-level AND term"):
        orders.where(~col("product_id").in_(ids) | (col("amount") > 1))


def test_multi_column_in_needs_one_column_per_value(orders, products):
    with pytest.raises(ValidationError, match=r"compares 2 values, but the table has 1 column"):
        orders.where(row(col("product_id"), col("amount")).in_(products.select(col("id"))))
    with pytest.raises(ValidationError, match=r"supported only on the left of in_\(table\)"):
        orders.select(row(col("product_id"), col("amount")).alias("r"))
    with pytest.raises(ValidationError, match=r"row\(\) needs at least two values"):
        row(col("product_id"))


@pytest.mark.parametrize("where", ["select", "join"])
def test_in_with_a_table_outside_where_is_refused_when_the_plan_is_built(orders, products, where):
    ids = products.select(col("id"))
    with pytest.raises(
        ValidationError, match=r"IN with a table is supported only in where\(\) \(a semi join\)"
    ):
        if where == "select":
            orders.select(col("product_id").in_(ids).alias("known"))
        else:
            orders.join(products, (col("product_id") == col("id")) & col("amount").in_(ids))


def test_in_with_a_table_as_an_and_term_is_fine(orders, products):
    t = orders.where(col("product_id").in_(products.select(col("id"))) & (col("amount") > 1))
    assert t.row_type == orders.row_type


# -- plan nodes directly ----------------------------------------------------------------------
def test_project_needs_one_name_per_expression(env):
    scan = Scan("T", ElementsSource(((1,),)), RowType.of(("id", BIGINT)))
    with pytest.raises(ValidationError, match="Project needs one name per expression"):
        Project(scan, (col("id"),), ("a", "b"))
    t = Table(Project(scan, (col("id") + 1,), ("x",)), env)
    assert str(t.row_type) == "(x BIGINT)"


# -- running ----------------------------------------------------------------------------------
def test_streaming_from_elements_is_refused_before_connecting():
    env = TableEnvironment.create(mode="streaming")
    t = env.from_elements([(1,)], ["id"])
    with pytest.raises(
        ValidationError,
        match=r"comes from from_elements\(\), a bounded input: in streaming mode read a "
        r"filesystem table",
    ):
        t.execute()
    assert env._spark is None


def test_unit_tests_cannot_reach_a_server(orders):
    """The autouse fixture of tests/unit/conftest.py turns a connection attempt into a failure."""
    with pytest.raises(pytest.fail.Exception, match="tried to connect to or start a Spark"):
        orders.execute()
