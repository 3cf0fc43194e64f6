"""Schemas (FLIP-70 computed columns, watermarks, primary keys) and TableDescriptor."""

from __future__ import annotations

import json

import pytest

from tableapi import Schema, TableDescriptor, ValidationError, call, col, lit, udf
from tableapi.schema import ComputedColumn, PhysicalColumn
from tableapi.types import TimeKind
from tests.unit.helpers import ORDERS


def orders_builder():
    return (
        Schema.new_builder()
        .column("order_id", "BIGINT")
        .column("amount", "INT")
        .column("currency", "STRING")
        .column("o_rowtime", "TIMESTAMP(3)")
    )


PHYSICAL = r"\[order_id, amount, currency, o_rowtime\]"


def full_schema() -> Schema:
    return (
        orders_builder()
        .column_by_expression("o_proctime", "PROCTIME()")
        .column_by_expression("amount_x2", col("amount") * 2)
        .column_by_expression("amount_x3", "amount * 3")
        .column_by_expression("label", "CASE WHEN amount > 10 THEN 'big' ELSE 'small' END")
        .column_by_expression("ts_ltz", "CAST(o_rowtime AS TIMESTAMP_LTZ(3))")
        .watermark("o_rowtime", col("o_rowtime") - lit(5).seconds)
        .primary_key("order_id")
        .build()
    )


# -- computed columns -------------------------------------------------------------------------
def test_computed_column_types_are_derived():
    s = full_schema()
    assert [str(f) for f in s.row_type] == [
        "order_id BIGINT NOT NULL",
        "amount INT",
        "currency STRING",
        "o_rowtime TIMESTAMP(3) *ROWTIME*",
        "o_proctime TIMESTAMP_LTZ(3) *PROCTIME* NOT NULL",
        "amount_x2 INT",
        "amount_x3 INT",
        "label STRING NOT NULL",
        "ts_ltz TIMESTAMP_LTZ(3)",
    ]
    assert [type(c) for c in s.columns[:5]] == [PhysicalColumn] * 4 + [ComputedColumn]
    assert [c.name for c in s.computed_columns] == [
        "o_proctime",
        "amount_x2",
        "amount_x3",
        "label",
        "ts_ltz",
    ]


def test_physical_row_type_has_only_physical_columns():
    s = full_schema()
    assert s.physical_row_type.names == ("order_id", "amount", "currency", "o_rowtime")
    assert s.physical_row_type.field("o_rowtime").type.time_kind is TimeKind.ROWTIME


def test_row_type_marks_time_attributes():
    s = full_schema()
    assert s.row_type.field("o_rowtime").type.time_kind is TimeKind.ROWTIME
    assert s.row_type.field("o_proctime").type.time_kind is TimeKind.PROCTIME
    assert s.row_type.field("ts_ltz").type.time_kind is TimeKind.NONE
    assert s.row_type.field("amount").type.time_kind is TimeKind.NONE


def test_primary_key_columns_become_not_null():
    s = full_schema()
    assert s.primary_key == ("order_id",)
    assert not s.row_type.field("order_id").type.nullable
    assert s.row_type.field("amount").type.nullable


def test_computed_column_referencing_another_computed_column():
    builder = (
        orders_builder()
        .column_by_expression("x", "amount * 2")
        .column_by_expression("y", col("x") + 1)
    )
    with pytest.raises(
        ValidationError,
        match=r"The computed column 'y' refers to 'x', which is "
        r"another computed column: computed columns may use "
        r"only physical columns of the same table: " + PHYSICAL,
    ):
        builder.build()


def test_computed_column_referencing_a_missing_column():
    builder = orders_builder().column_by_expression("y", "nope + 1")
    with pytest.raises(
        ValidationError,
        match=r"The computed column 'y' refers to 'nope', which is "
        r"no column: .*" + PHYSICAL,
    ):
        builder.build()


@pytest.mark.parametrize("expr", [col("amount").sum, "SUM(amount)", "COUNT(*) + 1"])
def test_aggregate_in_computed_column(expr):
    builder = orders_builder().column_by_expression("total", expr)
    with pytest.raises(
        ValidationError, match="The computed column 'total' may not contain an aggregate function"
    ):
        builder.build()


def test_subquery_in_computed_column_sql_text():
    with pytest.raises(ValidationError, match="Subqueries are not allowed"):
        orders_builder().column_by_expression("y", "amount IN (SELECT id FROM t)")


def test_subquery_in_computed_column_expression(env):
    ids = env.from_elements([(1,)], ["id"])
    builder = orders_builder().column_by_expression("y", col("amount").in_(ids))
    with pytest.raises(
        ValidationError,
        match=r"The computed column 'y' may not contain a "
        r"subquery: \(amount IN <table id>\)",
    ):
        builder.build()


@pytest.mark.parametrize("expr", ["my_func(amount)", call("my_func", col("amount"))])
def test_unknown_function_in_computed_column(expr):
    builder = orders_builder().column_by_expression("y", expr)
    with pytest.raises(
        ValidationError,
        match="The computed column 'y' calls unknown function "
        "'my_func'. Use a built-in function or pass a "
        r"registered udf\(...\) object",
    ):
        builder.build()


def test_udf_object_in_computed_column():
    plus_one = udf(lambda x: x + 1, result_type="BIGINT", name="plus_one")
    s = orders_builder().column_by_expression("y", plus_one(col("amount"))).build()
    assert str(s.row_type.field("y").type) == "BIGINT"
    assert str(s.computed_columns[0]) == "`y` AS plus_one(amount)"


def test_computed_column_type_error():
    with pytest.raises(ValidationError, match=r"TIMES needs numeric operands"):
        orders_builder().column_by_expression("y", "currency * 2").build()


def test_computed_column_needs_an_expression():
    with pytest.raises(
        ValidationError, match="computed column 'y' needs an expression or SQL text, got 5"
    ):
        orders_builder().column_by_expression("y", 5)


# -- watermarks -------------------------------------------------------------------------------
def test_watermark_on_a_missing_column():
    builder = orders_builder().watermark("ts", col("o_rowtime"))
    with pytest.raises(
        ValidationError,
        match=r"Column 'ts' not found in the watermark "
        r"declaration\. Available columns: " + PHYSICAL,
    ):
        builder.build()


def test_watermark_on_a_non_timestamp_column():
    builder = orders_builder().watermark("amount", col("amount"))
    with pytest.raises(
        ValidationError,
        match=r"The rowtime column 'amount' is INT, but a "
        r"watermark needs a TIMESTAMP\(3\) or "
        r"TIMESTAMP_LTZ\(3\) column",
    ):
        builder.build()


@pytest.mark.parametrize("declared", ["TIMESTAMP(6)", "TIMESTAMP", "TIMESTAMP_LTZ(9)"])
def test_watermark_on_a_timestamp_with_precision_above_3(declared):
    builder = Schema.new_builder().column("ts", declared).watermark("ts", "ts")
    with pytest.raises(
        ValidationError,
        match=r"watermark needs a TIMESTAMP\(3\) or .* add a "
        r"computed column CAST\(ts AS TIMESTAMP\(3\)\)",
    ):
        builder.build()


def test_watermark_expression_must_be_a_timestamp():
    builder = orders_builder().watermark("o_rowtime", col("amount"))
    with pytest.raises(
        ValidationError,
        match=r"The watermark expression amount must give a "
        r"timestamp",
    ):
        builder.build()


def test_watermark_on_a_computed_column():
    s = (
        Schema.new_builder()
        .column("ts6", "TIMESTAMP(6)")
        .column_by_expression("ts", "CAST(ts6 AS TIMESTAMP(3))")
        .watermark("ts", "ts - INTERVAL '1' SECOND")
        .build()
    )
    assert str(s.row_type.field("ts").type) == "TIMESTAMP(3) *ROWTIME*"
    assert str(s.watermark) == "WATERMARK FOR `ts` AS (ts - INTERVAL '1' SECOND)"


def test_watermark_on_timestamp_ltz():
    s = Schema.new_builder().column("ts", "TIMESTAMP_LTZ(3)").watermark("ts", "ts").build()
    assert str(s.row_type.field("ts").type) == "TIMESTAMP_LTZ(3) *ROWTIME*"


# -- primary keys and duplicates --------------------------------------------------------------
def test_primary_key_on_a_missing_column():
    builder = orders_builder().primary_key("id")
    with pytest.raises(
        ValidationError,
        match=r"Primary key column 'id' is not a column\. "
        r"Columns: " + PHYSICAL,
    ):
        builder.build()


def test_primary_key_on_a_computed_column():
    builder = orders_builder().column_by_expression("x", "amount * 2").primary_key("x")
    with pytest.raises(
        ValidationError,
        match="Primary key column 'x' is a computed column; a "
        "PRIMARY KEY must be declared on physical columns",
    ):
        builder.build()


def test_primary_key_needs_a_column():
    with pytest.raises(ValidationError, match=r"primary_key\(\) needs at least one column name"):
        orders_builder().primary_key()


@pytest.mark.parametrize("dup", [("amount", "BIGINT", None), ("amount", None, "order_id + 1")])
def test_duplicate_column(dup):
    name, data_type, expr = dup
    builder = orders_builder()
    if expr is None:
        builder.column(name, data_type)
    else:
        builder.column_by_expression(name, expr)
    with pytest.raises(
        ValidationError,
        match=r"Schema declares column\(s\) \['amount'\] more "
        r"than once",
    ):
        builder.build()


def test_unknown_physical_type():
    with pytest.raises(ValidationError, match="Unknown data type 'INTEGRAL'"):
        Schema.new_builder().column("a", "INTEGRAL")


# -- persistence ------------------------------------------------------------------------------
def test_to_dict_keeps_computed_columns_as_sql_text():
    d = full_schema().to_dict()
    assert d["columns"] == [
        {"name": "order_id", "type": "BIGINT"},
        {"name": "amount", "type": "INT"},
        {"name": "currency", "type": "STRING"},
        {"name": "o_rowtime", "type": "TIMESTAMP(3)"},
        {"name": "o_proctime", "expr": "PROCTIME()"},
        {"name": "amount_x2", "expr": "(amount * 2)"},
        {"name": "amount_x3", "expr": "(amount * 3)"},
        {"name": "label", "expr": "IF((amount > 10), 'big', 'small')"},
        {"name": "ts_ltz", "expr": "CAST(o_rowtime AS TIMESTAMP_LTZ(3))"},
    ]
    assert d["watermark"] == {"column": "o_rowtime", "expr": "(o_rowtime - INTERVAL '5' SECOND)"}
    assert d["primary_key"] == ["order_id"]
    assert json.loads(json.dumps(d)) == d


def test_from_dict_round_trip_gives_an_equal_row_type():
    s = full_schema()
    back = Schema.from_dict(json.loads(json.dumps(s.to_dict())))
    assert back.row_type == s.row_type
    assert back.physical_row_type == s.physical_row_type
    assert back.primary_key == s.primary_key
    assert [c.name for c in back.computed_columns] == [c.name for c in s.computed_columns]
    for a, b in zip(back.computed_columns, s.computed_columns, strict=True):
        assert a.expr.same_as(b.expr)
    assert back.to_dict() == s.to_dict()
    assert str(back) == str(s)


def test_round_trip_without_watermark_or_key():
    s = (
        Schema.new_builder()
        .column("a", "DECIMAL(10, 2)")
        .column("b", "INT NOT NULL")
        .column_by_expression("c", "a * b")
        .build()
    )
    back = Schema.from_dict(s.to_dict())
    assert back.row_type == s.row_type
    assert back.watermark is None and back.primary_key == ()
    assert str(back.row_type.field("b").type) == "INT NOT NULL"


def test_schema_str_is_flink_ddl_like():
    assert str(ORDERS) == (
        "(\n"
        "  `order_id` BIGINT,\n"
        "  `product_id` BIGINT,\n"
        "  `amount` INT,\n"
        "  `currency` STRING,\n"
        "  `o_rowtime` TIMESTAMP(3),\n"
        "  `o_proctime` AS PROCTIME(),\n"
        "  `amount_x2` AS (amount * 2),\n"
        "  WATERMARK FOR `o_rowtime` AS (o_rowtime - INTERVAL '5' SECOND),\n"
        "  CONSTRAINT `PK_order_id` PRIMARY KEY (`order_id`) NOT ENFORCED\n"
        ")"
    )


# -- TableDescriptor --------------------------------------------------------------------------
def descriptor_builder():
    return TableDescriptor.for_connector("filesystem").schema(full_schema())


def test_descriptor():
    d = (
        descriptor_builder()
        .option("path", "/data/orders")
        .format("csv")
        .option("csv.header", "true")
        .option("csv.field-delimiter", ";")
        .option("changelog.op-column", "op")
        .option("sink.parallelism", 2)
        .build()
    )
    assert d.connector == "filesystem"
    assert d.path == "/data/orders"
    assert d.format == "csv"
    assert d.options["sink.parallelism"] == "2"
    # Flink's format options become Spark's reader options; the connector's own are not passed
    # ... and a malformed record fails the query (Flink's default), never PERMISSIVE's NULLs
    assert d.reader_options == (("header", "true"), ("mode", "FAILFAST"), ("sep", ";"))
    with pytest.raises(ValidationError, match=r"maxColumns"):  # Spark's options are not passed
        descriptor_builder().option("path", "/d").format("csv").option("maxColumns", 9).build()


def test_unknown_connector():
    with pytest.raises(
        ValidationError,
        match=r"Unknown connector 'kafka'\. Available connectors: "
        r"\['blackhole', 'filesystem', 'jdbc', 'nexmark', 'print'\]",
    ):
        TableDescriptor.for_connector("kafka")


@pytest.mark.parametrize(
    ("options", "missing"),
    [({"format": "json"}, "['path']"), ({"path": "/x"}, "['format']"), ({}, "['path', 'format']")],
)
def test_missing_path_or_format(options, missing):
    builder = descriptor_builder()
    for k, v in options.items():
        builder.option(k, v)
    with pytest.raises(ValidationError) as info:
        builder.build()
    assert f"The filesystem connector needs the option(s) {missing}" in str(info.value)


def test_unknown_format():
    builder = descriptor_builder().option("path", "/x").format("avro")
    with pytest.raises(
        ValidationError,
        match=r"Unknown format 'avro'; the filesystem connector "
        r"reads \['json', 'csv', 'parquet'\]",
    ):
        builder.build()


def test_missing_schema():
    builder = TableDescriptor.for_connector("filesystem").option("path", "/x").format("json")
    with pytest.raises(
        ValidationError,
        match=r"A TableDescriptor needs a schema: call "
        r"\.schema\(\.\.\.\) first",
    ):
        builder.build()


def test_schema_must_be_a_schema():
    with pytest.raises(
        ValidationError,
        match=r"schema\(\) needs a Schema built with "
        r"Schema\.new_builder\(\)",
    ):
        TableDescriptor.for_connector("filesystem").schema("a INT")


def test_descriptor_round_trip():
    d = (
        descriptor_builder()
        .option("path", "/data/orders")
        .format("json")
        .option("changelog.op-column", "op")
        .build()
    )
    data = json.loads(json.dumps(d.to_dict()))
    assert data["connector"] == "filesystem"
    assert data["options"] == {
        "path": "/data/orders",
        "format": "json",
        "changelog.op-column": "op",
    }
    back = TableDescriptor.from_dict(data)
    assert back.options == d.options
    assert back.table_schema.row_type == d.table_schema.row_type
    assert back.to_dict() == d.to_dict()
