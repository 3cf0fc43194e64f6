"""Data types: parsing, widening, literal types and the types expressions derive."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from tableapi import ValidationError, call, coalesce, col, if_then_else, lit
from tableapi.functions import lookup
from tableapi.types import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    INT,
    INTERVAL,
    NULL,
    STRING,
    TIMESTAMP_3,
    DataType,
    Field,
    RowType,
    TimeKind,
    common_type,
    from_spark,
    implicit_cast,
    type_of_value,
)

DEC_10_2 = DataType("DECIMAL", (10, 2))
ROW = RowType.of(
    ("i", INT),
    ("b", BIGINT),
    ("d", DOUBLE),
    ("f", DataType("FLOAT")),
    ("si", DataType("SMALLINT")),
    ("ti", DataType("TINYINT")),
    ("dec", DEC_10_2),
    ("s", STRING),
    ("bo", BOOLEAN),
    ("dt", DATE),
    ("ts", TIMESTAMP_3),
    ("rt", TIMESTAMP_3.with_time_kind(TimeKind.ROWTIME)),
    ("nn", INT.with_nullable(False)),
)


def typ(expr) -> str:
    return str(expr.type_in(ROW))


# -- parsing ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("BIGINT", "BIGINT"),
        ("bigint", "BIGINT"),
        ("INTEGER", "INT"),
        ("VARCHAR(10)", "STRING"),
        ("CHAR(3)", "STRING"),
        ("DECIMAL(10, 2)", "DECIMAL(10, 2)"),
        ("numeric", "DECIMAL(10, 0)"),
        ("TIMESTAMP", "TIMESTAMP(6)"),
        ("TIMESTAMP(3)", "TIMESTAMP(3)"),
        ("TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(3)"),
        ("timestamp with local time zone", "TIMESTAMP_LTZ(6)"),
        ("INT NOT NULL", "INT NOT NULL"),
        ("DOUBLE PRECISION", "DOUBLE"),
        ("VARBINARY", "BYTES"),
        ("BOOL", "BOOLEAN"),
    ],
)
def test_parse(text, expected):
    assert str(DataType.parse(text)) == expected


def test_parse_round_trips_through_str():
    for t in ["DECIMAL(12, 4)", "TIMESTAMP(3)", "STRING NOT NULL", "TIMESTAMP_LTZ(3)"]:
        assert DataType.parse(str(DataType.parse(t))) == DataType.parse(t)
    assert DataType.parse(INT) is INT


def test_parse_unknown_type_lists_known_ones():
    with pytest.raises(
        ValidationError,
        match=r"Unknown data type 'JSONB'\. Known types: BIGINT, "
        r"BOOLEAN, BYTES, DATE, DECIMAL",
    ):
        DataType.parse("JSONB")
    with pytest.raises(ValidationError, match="Unknown data type"):
        DataType.parse("INT(")


def test_repr_and_str_with_time_kind():
    assert repr(DataType.parse("TIMESTAMP(3)")) == "DataType('TIMESTAMP(3)')"
    assert str(TIMESTAMP_3.with_time_kind(TimeKind.ROWTIME)) == "TIMESTAMP(3) *ROWTIME*"
    assert str(TIMESTAMP_3.with_time_kind(TimeKind.ROWTIME).plain()) == "TIMESTAMP(3)"


@pytest.mark.parametrize(
    ("text", "ddl"),
    [
        ("DECIMAL(10, 2)", "DECIMAL(10,2)"),
        ("BYTES", "BINARY"),
        ("TIMESTAMP_LTZ(3)", "TIMESTAMP"),
        ("TIMESTAMP(3)", "TIMESTAMP"),
        ("STRING", "STRING"),
        ("TINYINT", "TINYINT"),
    ],
)
def test_spark_ddl(text, ddl):
    assert DataType.parse(text).spark_ddl == ddl


def test_type_predicates():
    assert INT.is_integral and INT.is_numeric and not INT.is_timestamp
    assert DEC_10_2.is_numeric and not DEC_10_2.is_integral
    assert DataType.parse("TIMESTAMP_LTZ(3)").is_timestamp
    assert STRING.is_string and not STRING.is_numeric


# -- common types -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        (INT, BIGINT, "BIGINT"),
        (DataType("TINYINT"), DataType("SMALLINT"), "SMALLINT"),
        (INT, DOUBLE, "DOUBLE"),
        (DataType("FLOAT"), DOUBLE, "DOUBLE"),
        # Calcite's least restrictive DECIMAL, as Flink 2.3 types COALESCE and CASE:
        (DEC_10_2, INT, "DECIMAL(12, 2)"),
        (DEC_10_2, BIGINT, "DECIMAL(21, 2)"),
        (DEC_10_2, DataType("DECIMAL", (2, 1), False), "DECIMAL(10, 2)"),
        (DEC_10_2, DataType("DECIMAL", (20, 5)), "DECIMAL(20, 5)"),
        (DEC_10_2, DataType("DECIMAL", (5, 4)), "DECIMAL(12, 4)"),
        (DataType("DECIMAL", (38, 0)), DataType("DECIMAL", (38, 10)), "DECIMAL(38, 0)"),
        (DEC_10_2, DOUBLE, "DOUBLE"),
        (NULL, INT, "INT"),
        (STRING, NULL, "STRING"),
        (INT.with_nullable(False), BIGINT.with_nullable(False), "BIGINT NOT NULL"),
        (INT.with_nullable(False), BIGINT, "BIGINT"),
        (DATE, TIMESTAMP_3, "TIMESTAMP(3)"),
        (TIMESTAMP_3.with_time_kind(TimeKind.ROWTIME), TIMESTAMP_3, "TIMESTAMP(3)"),
    ],
)
def test_common_type(left, right, expected):
    assert str(common_type(left, right)) == expected
    assert str(common_type(right, left)) == expected


@pytest.mark.parametrize(
    ("left", "right"),
    [(INT, STRING), (BOOLEAN, INT), (DATE, STRING), (TIMESTAMP_3, BIGINT), (INTERVAL, INT)],
)
def test_no_common_type(left, right):
    assert common_type(left, right) is None


# -- literal types ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, "BOOLEAN NOT NULL"),
        (1, "INT NOT NULL"),
        (2**31 - 1, "INT NOT NULL"),
        (2**31, "BIGINT NOT NULL"),
        (-(2**31) - 1, "BIGINT NOT NULL"),
        (1.5, "DOUBLE NOT NULL"),
        (decimal.Decimal("1.25"), "DECIMAL(3, 2) NOT NULL"),
        (decimal.Decimal("7"), "DECIMAL(1, 0) NOT NULL"),
        ("x", "STRING NOT NULL"),
        (b"x", "BYTES NOT NULL"),
        (dt.datetime(2024, 1, 1, 12), "TIMESTAMP(3) NOT NULL"),
        (dt.date(2024, 1, 1), "DATE NOT NULL"),
        (dt.timedelta(seconds=5), "INTERVAL NOT NULL"),
        (None, "NULL"),
    ],
)
def test_type_of_value(value, expected):
    assert str(type_of_value(value)) == expected


def test_type_of_an_unsupported_value():
    with pytest.raises(ValidationError, match="Cannot use \\[1\\] of Python type list"):
        type_of_value([1])


# -- derived types of expressions -------------------------------------------------------------
@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (col("i") + col("b"), "BIGINT"),
        (col("i") + col("d"), "DOUBLE"),
        (col("si") + col("si"), "SMALLINT"),
        (col("ti") * col("i"), "INT"),
        # DECIMAL arithmetic as Flink 2.3 types it (each checked on Flink: LogicalTypeMerging)
        (col("dec") + col("i"), "DECIMAL(13, 2)"),
        (col("dec") - col("b"), "DECIMAL(22, 2)"),
        (col("dec") * col("dec"), "DECIMAL(21, 4)"),
        (col("b") * col("dec"), "DECIMAL(30, 2)"),
        (col("i") * lit(decimal.Decimal("1.5")), "DECIMAL(13, 1)"),
        (col("dec") * lit(decimal.Decimal("1.5")) + col("i"), "DECIMAL(14, 3)"),
        (col("dec") * col("i").cast("DECIMAL(38, 10)"), "DECIMAL(38, 6)"),
        (-col("dec"), "DECIMAL(10, 2)"),
        (col("dec") * col("d"), "DOUBLE"),
        (col("nn") + 1, "INT NOT NULL"),
        (col("nn") + col("i"), "INT"),
        (col("i") + 2**40, "BIGINT"),
        (col("i") % col("b"), "BIGINT"),
        (-col("d"), "DOUBLE"),
    ],
)
def test_arithmetic_widening(expr, expected):
    assert typ(expr) == expected


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (col("i") / col("i"), "INT"),
        (col("b") / col("i"), "BIGINT"),
        (col("nn") / 2, "INT NOT NULL"),
        (col("d") / col("i"), "DOUBLE"),
        (col("f") / col("i"), "DOUBLE"),
        (col("dec") / col("i"), "DECIMAL(21, 13)"),
        (col("dec") / 3, "DECIMAL(21, 13)"),
        (col("dec") / col("b"), "DECIMAL(30, 22)"),
        (col("dec") / col("dec"), "DECIMAL(23, 13)"),
    ],
)
def test_division_types(expr, expected):
    """Flink divides integers to an integer (the compiler uses Spark's ``div``)."""
    assert typ(expr) == expected


def test_arithmetic_errors():
    with pytest.raises(
        ValidationError,
        match=r"PLUS needs numeric operands \(or a timestamp and "
        r"an interval\); got \(STRING, INT NOT NULL\)\.",
    ):
        typ(col("s") + 1)
    with pytest.raises(ValidationError, match=r"MOD needs integer operands; got \(DOUBLE, INT"):
        typ(col("d") % 2)
    with pytest.raises(ValidationError, match=r"NEGATE needs a numeric operand; got \(STRING\)"):
        typ(-col("s"))
    with pytest.raises(ValidationError, match="MINUS needs numeric operands"):
        typ(col("ts") - col("ts"))


def test_timestamp_interval_arithmetic():
    assert typ(col("ts") - lit(5).seconds) == "TIMESTAMP(3)"
    assert typ(col("ts") + lit(1).days) == "TIMESTAMP(3)"
    assert typ(lit(5).seconds + col("ts")) == "TIMESTAMP(3)"
    assert typ(lit(5).seconds + lit(1).hours) == "INTERVAL NOT NULL"
    # arithmetic on a rowtime attribute gives a plain timestamp (the mark does not propagate)
    derived = (col("rt") - lit(5).seconds).type_in(ROW)
    assert derived.time_kind is TimeKind.NONE
    assert str(derived) == "TIMESTAMP(3)"


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (col("i") == col("b"), "BOOLEAN"),
        (col("i") < col("d"), "BOOLEAN"),
        (col("nn") == 1, "BOOLEAN NOT NULL"),
        (col("ts") > col("dt"), "BOOLEAN"),
        (col("rt") >= col("ts"), "BOOLEAN"),
        (col("i").is_not_distinct_from(col("b")), "BOOLEAN NOT NULL"),
        (col("i").between(1, 10), "BOOLEAN"),
        (col("ts").between(col("rt") - lit(4).hours, col("rt")), "BOOLEAN"),
        (col("i").in_(1, 2), "BOOLEAN"),
        (col("s").like("a%"), "BOOLEAN"),
        ((col("i") > 1) & col("bo"), "BOOLEAN"),
        (~col("bo"), "BOOLEAN"),
    ],
)
def test_comparison_and_logic_types(expr, expected):
    assert typ(expr) == expected


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        (
            col("i") == col("s"),
            r"EQUALS needs operands of comparable types \(cast one side\); "
            r"got \(INT, STRING\)\.",
        ),
        (col("i") > col("ts"), r"GREATER_THAN needs operands of comparable types"),
        (col("bo") != col("i"), r"NOT_EQUALS needs operands of comparable types"),
        (
            col("i").in_("a", "b"),
            r"IN needs operands of comparable types \(cast one side\); "
            r"got \(INT, STRING NOT NULL, STRING NOT NULL\)",
        ),
        (col("s").between(1, 2), r"BETWEEN needs operands of comparable types"),
        (col("bo") & col("i"), r"AND needs BOOLEAN operands; got \(BOOLEAN, INT\)"),
        (col("i").like("x"), r"LIKE needs STRING operands"),
    ],
)
def test_comparisons_of_incompatible_types(expr, message):
    with pytest.raises(ValidationError, match=message):
        typ(expr)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (col("i").sum, "INT"),  # Flink 2.3: SUM keeps an integral type (and wraps)
        (col("si").sum, "SMALLINT"),
        (col("dec").sum, "DECIMAL(38, 2)"),
        (col("d").sum, "DOUBLE"),
        (col("i").count, "BIGINT NOT NULL"),
        (call("count"), "BIGINT NOT NULL"),
        (col("i").avg, "INT"),  # Flink 2.3: truncated toward zero
        (col("dec").avg, "DECIMAL(38, 6)"),  # DECIMAL(38, max(6, s))
        (col("d").avg, "DOUBLE"),
        (col("i").count.distinct, "BIGINT NOT NULL"),
        (col("i").sum.distinct, "INT"),
        (col("nn").min, "INT"),
        (col("s").max, "STRING"),
        (col("rt").max, "TIMESTAMP(3)"),
    ],
)
def test_aggregate_types(expr, expected):
    assert typ(expr) == expected


def test_aggregate_errors():
    with pytest.raises(ValidationError, match=r"SUM needs a numeric argument; got \(STRING\)"):
        typ(col("s").sum)
    with pytest.raises(ValidationError, match=r"AVG needs a numeric argument"):
        typ(col("ts").avg)
    with pytest.raises(
        ValidationError,
        match=r"Aggregate SUM\(SUM\(i\)\) contains another "
        r"aggregate SUM\(i\)",
    ):
        typ(col("i").sum.sum)


def test_proctime_is_a_time_attribute():
    t = call("PROCTIME").type_in(ROW)
    assert str(t) == "TIMESTAMP_LTZ(3) *PROCTIME* NOT NULL"
    assert t.time_kind is TimeKind.PROCTIME
    assert t.name == "TIMESTAMP_LTZ"
    cast = call("PROCTIME").cast("TIMESTAMP(3)").type_in(ROW)
    assert str(cast) == "TIMESTAMP(3) NOT NULL"
    assert cast.time_kind is TimeKind.NONE
    assert str(call("current_timestamp").type_in(ROW)) == "TIMESTAMP_LTZ(3) NOT NULL"


def test_function_types():
    assert typ(col("s").upper_case) == "STRING"
    assert typ(col("s").char_length) == "INT"
    assert typ(call("year", col("ts"))) == "BIGINT"
    assert typ(col("i").power(2)) == "DOUBLE"
    assert typ(col("d").abs) == "DOUBLE"
    assert typ(col("i").cast("STRING")) == "STRING"
    assert typ(col("nn").cast("STRING")) == "STRING NOT NULL"
    assert typ(col("i").is_null) == "BOOLEAN NOT NULL"
    assert typ(if_then_else(col("bo"), col("i"), col("b"))) == "BIGINT"
    assert typ(coalesce(col("i"), 0)) == "INT NOT NULL"
    assert typ(coalesce(col("i"), col("b"))) == "BIGINT"


def test_function_argument_errors():
    with pytest.raises(
        ValidationError,
        match=r"UPPER needs a STRING first argument \(cast it\); "
        r"got \(INT\)",
    ):
        typ(col("i").upper_case)
    with pytest.raises(ValidationError, match=r"UPPER takes 1 argument\(s\), got 2\."):
        typ(call("upper", col("s"), col("s")))
    with pytest.raises(ValidationError, match=r"SUBSTRING takes 2 to 3 argument\(s\), got 1\."):
        lookup("substring").result_type([STRING])
    with pytest.raises(ValidationError, match=r"COALESCE takes 1 or more argument\(s\), got 0\."):
        lookup("coalesce").result_type([])
    with pytest.raises(ValidationError, match=r"IF needs a BOOLEAN condition first"):
        typ(if_then_else(col("i"), 1, 2))
    with pytest.raises(ValidationError, match=r"IF needs branches of a common type"):
        typ(if_then_else(col("bo"), 1, "x"))
    with pytest.raises(ValidationError, match=r"YEAR needs a DATE or TIMESTAMP argument"):
        typ(call("year", col("s")))


def test_missing_column_names_the_available_ones():
    pattern = r"Column 'missing' not found\. Available columns: \[i, b, d, f, si, ti, dec, s, "
    with pytest.raises(ValidationError, match=pattern + r"bo, dt, ts, rt, nn\]"):
        typ(col("missing") + 1)


# -- row types --------------------------------------------------------------------------------
def test_row_type():
    row = RowType.of(("id", BIGINT), ("Name", STRING))
    assert row.names == ("id", "Name")
    assert "id" in row and "name" not in row
    assert len(row) == 2
    assert [f.name for f in row] == ["id", "Name"]
    assert row.field("Name") == Field("Name", STRING)
    assert row.index("Name") == 1
    assert str(row) == "(id BIGINT, Name STRING)"
    assert row.spark_ddl == "`id` BIGINT, `Name` STRING"


def test_row_type_field_error_suggests_the_right_case():
    row = RowType.of(("id", BIGINT), ("Name", STRING))
    with pytest.raises(
        ValidationError,
        match=r"Column 'name' not found in select\(\)\. Available "
        r"columns: \[id, Name\]\. Did you mean 'Name'\? "
        r"Column names are case-sensitive\.",
    ):
        row.field("name", "select()")


def test_from_spark_types():
    from pyspark.sql import types as T

    assert from_spark(T.LongType()) == BIGINT
    assert from_spark(T.IntegerType()) == INT
    assert from_spark(T.StringType()) == STRING
    assert from_spark(T.DecimalType(12, 3)) == DataType("DECIMAL", (12, 3))
    assert str(from_spark(T.TimestampType())) == "TIMESTAMP(6)"
    assert from_spark(T.DateType()) == DATE
    with pytest.raises(ValidationError, match="has no Table API counterpart"):
        from_spark(T.ArrayType(T.IntegerType()))


# Which query column types Flink 2.3 casts to which sink column types on INSERT (x) and which it
# refuses (.): measured with EXPLAIN of INSERT INTO a one-column blackhole table, every pair.
_SINK_TYPES = (
    "TINYINT SMALLINT INT BIGINT DECIMAL(10,2) DECIMAL(38,18) DECIMAL(5,0) FLOAT DOUBLE BOOLEAN "
    "STRING DATE TIMESTAMP(3) TIMESTAMP(6) TIMESTAMP(0) TIMESTAMP_LTZ(3) BYTES"
).split()
_FLINK_INSERT_CASTS = {
    "TINYINT": "x x x x x x x x x . . . . . . . .",
    "SMALLINT": ". x x x x x x x x . . . . . . . .",
    "INT": ". . x x x x x x x . . . . . . . .",
    "BIGINT": ". . . x x x x x x . . . . . . . .",
    "DECIMAL(10,2)": ". . . . x x x x x . . . . . . . .",
    "DECIMAL(38,18)": ". . . . x x x x x . . . . . . . .",
    "DECIMAL(5,0)": ". . . . x x x x x . . . . . . . .",
    "FLOAT": ". . . . x x x x x . . . . . . . .",
    "DOUBLE": ". . . . x x x . x . . . . . . . .",
    "BOOLEAN": ". . . . . . . . . x . . . . . . .",
    "STRING": ". . . . . . . . . . x . . . . . .",
    "DATE": ". . . . . . . . . . . x . . . . .",
    "TIMESTAMP(3)": ". . . . . . . . . . . x x x x x .",
    "TIMESTAMP(6)": ". . . . . . . . . . . x x x x x .",
    "TIMESTAMP(0)": ". . . . . . . . . . . x x x x x .",
    "TIMESTAMP_LTZ(3)": ". . . . . . . . . . . . x x x x .",
    "BYTES": ". . . . . . . . . . . . . . . . x",
}


@pytest.mark.parametrize("source", _SINK_TYPES)
def test_the_implicit_casts_of_an_insert_are_flinks(source: str) -> None:
    row = _FLINK_INSERT_CASTS[source].split()
    for target, flink in zip(_SINK_TYPES, row, strict=True):
        got = implicit_cast(DataType.parse(source), DataType.parse(target))
        assert got == (flink == "x"), f"{source} -> {target}: Flink {flink}"
    assert implicit_cast(NULL, DataType.parse(source))  # an untyped NULL goes anywhere
