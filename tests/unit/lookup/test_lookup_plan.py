"""Lookup joins at plan time: the jdbc table, the LookupJoin node (Flink's section-3 rules,
its errors), the hints, the rule (pre-filter push-down, hash distribution), explain, and the
operator spec the compiler builds. No server needed."""

from __future__ import annotations

import pytest

from tableapi import Schema, TableDescriptor, TableEnvironment, col, lit
from tableapi.compiler.lookup import lookup_spec, probe_fields
from tableapi.errors import ValidationError
from tableapi.physical import check_streaming
from tableapi.plan import Exchange, Filter, LookupJoin, Project

DB = "jdbc:sqlite:/tmp/tableapi-unit/shop.db"


def customers(**options: str) -> TableDescriptor:
    builder = (
        TableDescriptor.for_connector("jdbc")
        .schema(
            Schema.new_builder()
            .column("id", "BIGINT")
            .column("name", "STRING")
            .column("age", "INT")
            .column("country", "STRING")
            .column_by_expression("nominal_age", "age + 1")
            .primary_key("id")
            .build()
        )
        .option("url", DB)
        .option("table-name", "customers")
    )
    for k, v in options.items():
        builder.option(k, v)
    return builder.build()


def make_env(mode: str = "streaming", changelog: bool = False) -> TableEnvironment:
    env = TableEnvironment.create(mode=mode)
    orders = (
        TableDescriptor.for_connector("filesystem")
        .schema(
            Schema.new_builder()
            .column("order_id", "BIGINT")
            .column("customer_id", "BIGINT")
            .column("c_name", "STRING")
            .column("amount", "INT")
            .column("o_rowtime", "TIMESTAMP(3)")
            .column_by_expression("o_proctime", "PROCTIME()")
            .watermark("o_rowtime", "o_rowtime - INTERVAL '5' SECOND")
            .primary_key("order_id")
            .build()
        )
        .option("path", "/data/orders")
        .option("format", "json")
    )
    if changelog:
        orders = orders.option("changelog.op-column", "op")
    env.create_temporary_table("Orders", orders.build())
    env.create_temporary_table(
        "Customers", customers(**{"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "9"})
    )
    return env


@pytest.fixture
def env() -> TableEnvironment:
    return make_env()


def lookup_node(table) -> LookupJoin:  # type: ignore[no-untyped-def]
    node = next(n for n in table.optimized().plan.walk() if isinstance(n, LookupJoin))
    assert isinstance(node, LookupJoin)
    return node


def join(env: TableEnvironment, condition, how: str = "inner", as_of: str = "o_proctime"):  # type: ignore[no-untyped-def]
    return env.from_path("Orders").temporal_join(
        env.from_path("Customers"), condition, as_of=col(as_of), how=how
    )


# -- the jdbc table ---------------------------------------------------------------------------


def test_jdbc_table_options_are_validated_when_built() -> None:
    with pytest.raises(ValidationError, match=r"Unsupported options found for 'jdbc'"):
        customers(**{"lookup.cahce": "PARTIAL"})
    with pytest.raises(ValidationError, match=r"The cache will not have evictions"):
        customers(**{"lookup.cache": "PARTIAL"})
    with pytest.raises(ValidationError, match=r"'lookup.max-retries' option shouldn't be negative"):
        customers(**{"lookup.max-retries": "-1"})
    d = customers(**{"lookup.cache": "FULL", "lookup.full-cache.periodic-reload.interval": "1h"})
    assert d.jdbc.cache.kind == "FULL" and d.jdbc.cache.reload_interval_ms == 3_600_000
    with pytest.raises(ValidationError, match="not a filesystem table"):
        _ = d.path


def test_lookup_table_cannot_be_scanned(env: TableEnvironment) -> None:
    with pytest.raises(ValidationError, match=r"Customers is a lookup table .* never scanned"):
        check_streaming(env.from_path("Customers").select(col("id")).optimized().plan)
    with pytest.raises(ValidationError, match=r"looks the table up as it is"):
        env.from_path("Orders").temporal_join(
            env.from_path("Customers").where(col("age") > 1),
            col("customer_id") == col("id"),
            as_of=col("o_proctime"),
        )


# -- section 3: keys, filters, pre-filters, residuals -------------------------------------------


def test_keys_filters_prefilter_residual_left(env: TableEnvironment) -> None:
    cond = (
        (col("customer_id") == col("id"))
        & (col("age") > 20)  # dimension only: where
        & (col("amount") > 3)  # probe only, left join: pre-filter
        & (col("amount") > col("nominal_age"))  # both: residual
        & (lit("NL") == col("country"))  # constant key
    )
    node = lookup_node(join(env, cond, "left"))
    assert [str(k) for k in node.lookup.keys] == ["id=customer_id", "country='NL'"]
    assert str(node.lookup.dim_filter) == "(age > 20)"
    assert str(node.lookup.pre_filter) == "(amount > 3)"
    assert str(node.lookup.residual) == "(amount > nominal_age)"
    assert not isinstance(node.input, Filter)  # a left join pads, it does not drop


def test_inner_join_pushes_probe_only_terms_below(env: TableEnvironment) -> None:
    node = lookup_node(join(env, (col("customer_id") == col("id")) & (col("amount") > 3)))
    assert node.lookup.pre_filter is None
    assert isinstance(node.input, Filter) and str(node.input.condition) == "(amount > 3)"


def test_expression_keys_and_second_equality_on_a_key_column(env: TableEnvironment) -> None:
    cond = ((col("order_id") % 4) == col("id")) & (col("customer_id") == col("id"))
    node = lookup_node(join(env, cond))
    assert [str(k) for k in node.lookup.keys] == ["id=(order_id % 4)"]
    assert str(node.lookup.residual) == "(customer_id = id)"


def test_several_keys_in_any_order(env: TableEnvironment) -> None:
    cond = (col("name") == col("c_name")) & (col("customer_id") == col("id"))
    node = lookup_node(join(env, cond))
    assert [str(k) for k in node.lookup.keys] == ["name=c_name", "id=customer_id"]


def test_null_constant_key_and_computed_column_condition(env: TableEnvironment) -> None:
    node = lookup_node(join(env, (col("id") == lit(None)) & (col("nominal_age") > 10)))
    assert [(k.column, k.probe, k.value) for k in node.lookup.keys] == [("id", None, None)]
    assert str(node.lookup.dim_filter) == "(nominal_age > 10)"
    # a computed column is no key: it is computed after the fetch
    with pytest.raises(ValidationError, match="requires an equality condition"):
        join(env, col("amount") == col("nominal_age"))


@pytest.mark.parametrize(
    "condition, message",
    [
        (lit(True), r"Temporal table join requires an equality condition on fields of table "
         r"\[default_catalog\.default_database\.Customers\]"),
        ((col("customer_id") + 1) == (col("id") + 2), "requires an equality condition"),
        (col("c_name") == col("id"), r"implicit type conversion between VARCHAR\(2147483647\) "
         r"and BIGINT is not supported on join's condition now"),
        (col("customer_id").cast("DOUBLE") == col("id").cast("DOUBLE"),
         "requires an equality condition"),
        (col("customer_id").is_not_distinct_from(col("id")),
         r"LookupJoin doesn't support join condition contains 'a IS NOT DISTINCT FROM b'"),
        ((col("customer_id") == col("id")) | (col("customer_id").is_null & col("id").is_null),
         r"LookupJoin doesn't support join condition contains"),
    ],
)  # fmt: skip
def test_plan_time_errors(env: TableEnvironment, condition, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError, match=message):
        join(env, condition)


def test_integer_probe_keys_widen_to_the_column_type(env: TableEnvironment) -> None:
    node = lookup_node(join(env, col("amount") == col("id")))  # INT probe, BIGINT column
    assert [str(k) for k in node.lookup.keys] == ["id=amount"]


def test_a_probe_number_wider_than_the_column_is_no_key(env: TableEnvironment) -> None:
    # Flink 2.3 (found by the conformance suite): SQL casts the COLUMN (age INT) to the probe's
    # BIGINT, so the equality is a remaining condition, not a lookup key
    condition = (col("customer_id") == col("id")) & (col("order_id") == col("age"))
    node = lookup_node(join(env, condition))
    assert [str(k) for k in node.lookup.keys] == ["id=customer_id"]
    assert str(node.lookup.residual) == "(order_id = age)"
    with pytest.raises(ValidationError, match="requires an equality condition"):
        join(env, col("customer_id") == col("age"))


def test_event_time_right_join_and_plain_as_of_are_refused(env: TableEnvironment) -> None:
    key = col("customer_id") == col("id")
    with pytest.raises(ValidationError, match=r"Event-Time Temporal Table Join requires both "
                       r"primary key and row time attribute.*lookup table"):  # fmt: skip
        join(env, key, as_of="o_rowtime")
    with pytest.raises(ValidationError, match=r"only support INNER JOIN and LEFT JOIN, but was "
                       r"RIGHT JOIN"):  # fmt: skip
        join(env, key, how="right")
    with pytest.raises(ValidationError, match=r"only supports 'FOR SYSTEM_TIME AS OF' left "
                       r"table's time attribute field"):  # fmt: skip
        join(env, key, as_of="amount")


def test_output_row_and_unique_keys(env: TableEnvironment) -> None:
    left = join(env, col("customer_id") == col("id"), "left")
    assert left.column_names[-5:] == ("id", "name", "age", "country", "nominal_age")
    assert left.row_type.field("id").type.nullable  # padded
    # the keys cover the primary key: one row per probe row, its key stays
    assert lookup_node(left).unique_keys == (("order_id",),)
    assert lookup_node(join(env, col("c_name") == col("name"))).unique_keys == ()


# -- hints -------------------------------------------------------------------------------------


def test_shuffle_hash_and_lookup_hints(env: TableEnvironment) -> None:
    q = join(env, col("customer_id") == col("id")).with_hint("SHUFFLE_HASH", "Customers")
    node = lookup_node(q)
    assert node.shuffle and isinstance(node.input, Exchange)
    assert [str(k) for k in node.input.keys] == ["customer_id"]
    retry = {
        "table": "Customers",
        "retry-predicate": "lookup_miss",
        "retry-strategy": "fixed_delay",
        "fixed-delay": "10 ms",
        "max-attempts": "3",
        "async": "true",
    }
    q2 = join(env, col("customer_id") == col("id")).with_hint("LOOKUP", **retry)
    node2 = lookup_node(q2)
    assert not node2.shuffle and not isinstance(node2.input, Exchange)
    text = q2.explain()
    assert "retry=[lookup_miss, FIXED_DELAY, 10ms, 3]" in text
    assert "async=[ORDERED, 100, 180000ms]" in text
    # only the first LOOKUP hint of a table takes effect
    q3 = q2.with_hint("LOOKUP", table="Customers", shuffle="true")
    assert not lookup_node(q3).shuffle
    assert lookup_node(join(env, col("customer_id") == col("id")).with_hint(
        "LOOKUP", table="Customers", shuffle="true")).shuffle  # fmt: skip


@pytest.mark.parametrize(
    "options, message",
    [
        ({"table": ""}, r"Invalid LOOKUP hint: incomplete required option\(s\): \[Key: 'table'"),
        ({"table": "Customers", "async": "yes"},
         r"Could not parse value 'yes' for key 'async'"),
        ({"table": "Customers", "output-mode": "allow-unordered"},
         r"Could not parse value 'allow-unordered' for key 'output-mode'"),
        ({"table": "Customers", "max-attempts": "3"},
         r"retry options can be both null or all not null"),
        ({"table": "Customers", "retry-predicate": "exception", "retry-strategy": "fixed_delay",
          "fixed-delay": "1s", "max-attempts": "1"},
         r"unsupported retry-predicate 'exception', only 'lookup_miss' is supported currently"),
        ({"table": "Customers", "retry-predicate": "lookup_miss", "retry-strategy": "fixed_delay",
          "fixed-delay": "1s", "max-attempts": "-3"},
         r"max-attempts value should be positive integer but was -3"),
        ({"table": "Products"}, r"Hint LOOKUP names table 'Products', but this query reads only"),
    ],
)  # fmt: skip
def test_lookup_hint_errors(env: TableEnvironment, options, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError, match=message):
        join(env, col("customer_id") == col("id")).with_hint("LOOKUP", **options)


def test_hash_lookup_join_needs_insert_only_input_or_upsert_key_with_the_lookup_keys() -> None:
    env = make_env(changelog=True)
    # Refused, not ignored as Flink 2.3 does (the conformance suite's generator avoids it)
    by_customer = join(env, col("customer_id") == col("id"))
    message = (
        r"needs an insert-only probe input, or one whose upsert key contains the lookup keys "
        r"\['customer_id'\]"
    )
    for hinted in (
        by_customer.with_hint("SHUFFLE_HASH", "Customers"),
        by_customer.with_hint("LOOKUP", table="Customers", shuffle="true"),
    ):
        with pytest.raises(ValidationError, match=message):
            hinted.explain()
    # hashing on the upsert key's column keeps each row's changes in one task
    by_order = join(env, col("order_id") == col("id")).with_hint("SHUFFLE_HASH", "Customers")
    assert "Exchange(distribution=[hash[order_id]], changelogMode=[I,UB,UA,D])" in (
        by_order.explain()
    )
    # without the hint, a changelog probe keeps its kinds
    assert "LookupJoin(" in join(env, col("customer_id") == col("id")).explain()


# -- explain and the operator spec ------------------------------------------------------------


def test_explain_line(env: TableEnvironment) -> None:
    q = join(env, (col("customer_id") == col("id")) & (col("age") > 20), "left")
    calc, line = q.explain().split("== Optimized Physical Plan ==")[1].splitlines()[1:3]
    # nominal_age (age + 1) is not in the condition: computed after the join, NULL if padded
    assert calc.startswith("Calc(select=[order_id, ") and calc.endswith(
        "country, IF((id IS NOT NULL), (age + 1), NULL) AS nominal_age], changelogMode=[I])"
    )
    line = line.removeprefix("+- ")
    assert line.startswith(
        "LookupJoin(table=[default_catalog.default_database.Customers], "
        "joinType=[LeftOuterJoin], lookup=[id=customer_id], where=[(age > 20)], select=[order_id"
    )
    assert "cache=[PARTIAL, maxRows=9, cacheMissingKey=true]" in line
    assert line.endswith("changelogMode=[I])")


def test_operator_spec() -> None:
    env = make_env(mode="batch")
    cond = (
        (col("customer_id") == col("id"))
        & (lit("NL") == col("country"))
        & (col("nominal_age") > 20)
        & (col("amount") > 1)
        & (col("amount") < col("age"))
    )
    node = lookup_node(join(env, cond, "left").with_hint("SHUFFLE_HASH", "Customers"))
    fields = probe_fields(node, [])
    spec = lookup_spec(node, fields, "q")
    assert fields[-1] == ("__lk0", "BIGINT")
    assert [(k.column, k.probe, k.value) for k in spec.keys] == [(0, len(fields) - 1, None),
                                                                (3, None, "NL")]  # fmt: skip
    assert spec.dim_fields == (("id", "BIGINT"), ("name", "STRING"), ("age", "INT"),
                               ("country", "STRING"))  # fmt: skip
    assert spec.computed[0][0] == "nominal_age"
    assert spec.dim_filter == ("call", ">", ("col", "r", 4), ("lit", 20))
    assert spec.pre_filter == ("call", ">", ("col", "l", 3), ("lit", 1))
    assert spec.residual == ("call", "<", ("col", "l", 3), ("col", "r", 2))
    assert spec.output_names == ("id", "name", "age", "country", "nominal_age")
    assert spec.shuffle and spec.cache.kind == "PARTIAL" and spec.cache.max_rows == 9
    assert spec.cache_scope == "partition"


def labels_env() -> TableEnvironment:
    env = make_env(mode="batch")
    env.create_temporary_table(
        "Labels",
        TableDescriptor.for_connector("jdbc")
        .schema(
            Schema.new_builder()
            .column("id", "BIGINT")
            .column_by_expression("label", "CAST(id AS STRING)")
            .column_by_expression("tagged", "CONCAT(CAST(id AS STRING), '!')")
            .column("score", "INT")
            .column_by_expression("seen", "PROCTIME()")  # a plain timestamp after the join
            .build()
        )
        .option("url", DB)
        .option("table-name", "labels")
        .build(),
    )
    return env


@pytest.mark.parametrize("how", ["inner", "left"])
def test_computed_columns_the_condition_does_not_read_are_computed_after_the_join(
    how: str,
) -> None:
    # (conformance difference 8: a CAST or CONCAT computed column was refused)
    env = labels_env()
    q = env.from_path("Orders").temporal_join(
        env.from_path("Labels"), col("customer_id") == col("id"), as_of=col("o_proctime"),
        how=how,
    )  # fmt: skip
    node = lookup_node(q)
    spec = lookup_spec(node, probe_fields(node, []), "q")
    assert spec.computed == () and spec.output_names == ("id", "score")
    project = q.optimized().plan
    assert isinstance(project, Project) and isinstance(project.input, LookupJoin)
    assert project.row_type == q.row_type  # same columns, order and types as before
    label = str(project.exprs[project.names.index("label")])
    assert label == ("CAST(id AS STRING)" if how == "inner"
                     else "IF((id IS NOT NULL), CAST(id AS STRING), NULL)")  # fmt: skip


def test_a_computed_column_the_condition_reads_and_the_operator_cannot_compute_says_so() -> None:
    env = labels_env()
    q = env.from_path("Orders").temporal_join(
        env.from_path("Labels"),
        (col("customer_id") == col("id")) & (col("label") != "7"),
        as_of=col("o_proctime"),
    )
    node = lookup_node(q)
    assert [c.name for c in node.table.schema.computed_columns] == ["label"]
    with pytest.raises(ValidationError, match=r"The lookup join on .*Labels cannot evaluate its "
                       r"computed column label AS .*CAST.* in the join condition yet.*where\(\) "
                       r"after the join"):  # fmt: skip
        lookup_spec(node, probe_fields(node, []), "q")
