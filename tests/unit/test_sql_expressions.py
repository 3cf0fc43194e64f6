"""SQL-string expressions parse into the same trees the fluent API builds."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from tableapi import ValidationError, call, coalesce, col, concat, if_then_else, lit
from tableapi.expressions import Call, Cast, Column, Literal, UnresolvedCall
from tableapi.sql_expressions import parse_expression
from tableapi.types import BIGINT, INT, STRING, TIMESTAMP_3, DataType, RowType, TimeKind

ROW = RowType.of(("amount", INT), ("id", BIGINT), ("name", STRING), ("o_rowtime", TIMESTAMP_3))


def test_arithmetic():
    e = parse_expression("amount * 2")
    assert isinstance(e, Call) and e.name == "times"
    assert str(e) == "(amount * 2)"
    assert e.same_as(col("amount") * 2)
    assert e.type_in(ROW) == INT


def test_precedence_follows_sql():
    assert str(parse_expression("amount + id * 2")) == "(amount + (id * 2))"
    assert str(parse_expression("(amount + id) * 2")) == "((amount + id) * 2)"
    assert (
        str(parse_expression("amount = 1 OR id = 2 AND name = 'x'"))
        == "((amount = 1) OR ((id = 2) AND (name = 'x')))"
    )


def test_proctime():
    e = parse_expression("PROCTIME()")
    assert isinstance(e, Call) and e.name == "proctime"
    t = e.type_in(ROW)
    assert t.time_kind is TimeKind.PROCTIME
    assert str(t) == "TIMESTAMP_LTZ(3) *PROCTIME* NOT NULL"


def test_timestamp_minus_interval():
    e = parse_expression("o_rowtime - INTERVAL '5' SECOND")
    assert str(e) == "(o_rowtime - INTERVAL '5' SECOND)"
    assert e.same_as(col("o_rowtime") - lit(5).seconds)
    assert e.type_in(ROW) == TIMESTAMP_3


@pytest.mark.parametrize(
    ("text", "delta"),
    [
        ("INTERVAL '5' SECOND", dt.timedelta(seconds=5)),
        ("INTERVAL '2' HOUR", dt.timedelta(hours=2)),
        ("INTERVAL '10' MINUTES", dt.timedelta(minutes=10)),
        ("INTERVAL '1' DAY", dt.timedelta(days=1)),
        ("INTERVAL 5 SECOND", dt.timedelta(seconds=5)),
        ("INTERVAL '1.5' SECOND", dt.timedelta(milliseconds=1500)),
    ],
)
def test_interval_literals(text, delta):
    e = parse_expression(text)
    assert isinstance(e, Literal)
    assert e.value == delta
    assert e.type.name == "INTERVAL"


def test_unsupported_interval_unit():
    with pytest.raises(
        ValidationError,
        match=r"line 1, column 1 to line 1, column 17: An INTERVAL of YEAR is not supported",
    ):
        parse_expression("INTERVAL '5' YEAR")


def test_searched_case():
    e = parse_expression(
        "CASE WHEN amount > 10 THEN 'big' WHEN amount > 0 THEN 'small' ELSE 'none' END"
    )
    assert str(e) == "IF((amount > 10), 'big', IF((amount > 0), 'small', 'none'))"
    assert e.same_as(
        if_then_else(col("amount") > 10, "big", if_then_else(col("amount") > 0, "small", "none"))
    )
    assert e.type_in(ROW) == DataType("STRING", nullable=False)


def test_case_without_else_is_nullable():
    e = parse_expression("CASE WHEN amount > 10 THEN 'big' END")
    assert str(e) == "IF((amount > 10), 'big', NULL)"
    assert e.type_in(ROW) == STRING


def test_simple_case_compares_the_operand():
    e = parse_expression("CASE amount WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END")
    assert str(e) == "IF((amount = 1), 'one', IF((amount = 2), 'two', 'many'))"
    assert e.type_in(ROW) == DataType("STRING", nullable=False)


@pytest.mark.parametrize(
    ("text", "to"),
    [
        ("CAST(amount AS BIGINT)", "BIGINT"),
        ("CAST(amount AS STRING)", "STRING"),
        ("CAST(amount AS VARCHAR)", "STRING"),
        ("CAST(amount AS DECIMAL(10, 2))", "DECIMAL(10, 2)"),
        ("CAST(name AS TIMESTAMP(3))", "TIMESTAMP(3)"),
        ("CAST(amount AS DOUBLE)", "DOUBLE"),
        ("CAST(name AS DATE)", "DATE"),
        ("CAST(o_rowtime AS TIMESTAMP_LTZ(3))", "TIMESTAMP_LTZ(3)"),
        ("CAST(o_rowtime AS TIMESTAMP(3) WITH LOCAL TIME ZONE)", "TIMESTAMP_LTZ(3)"),
    ],
)
def test_cast(text, to):
    e = parse_expression(text)
    assert isinstance(e, Cast)
    assert str(e.to) == to
    assert str(e.type_in(ROW)) == to


def test_in_between_null_checks_and_logic():
    assert parse_expression("amount IN (1, 2, 3)").same_as(col("amount").in_(1, 2, 3))
    assert parse_expression("amount BETWEEN 1 AND 10").same_as(col("amount").between(1, 10))
    assert parse_expression("name IS NULL").same_as(col("name").is_null)
    assert parse_expression("name IS NOT NULL").same_as(col("name").is_not_null)
    assert parse_expression("NOT amount > 1").same_as(~(col("amount") > 1))
    assert parse_expression("-amount").same_as(-col("amount"))
    assert parse_expression("amount <> 1").same_as(col("amount") != 1)
    assert parse_expression("amount != 1").same_as(col("amount") != 1)
    assert parse_expression("name LIKE 'E%'").same_as(col("name").like("E%"))
    assert parse_expression("amount % 2").same_as(col("amount") % 2)


def test_null_safe_comparisons():
    assert parse_expression("id <=> amount").same_as(col("id").is_not_distinct_from(col("amount")))
    assert parse_expression("id IS NOT DISTINCT FROM amount").same_as(
        col("id").is_not_distinct_from(col("amount"))
    )
    assert parse_expression("id IS DISTINCT FROM amount").same_as(
        col("id").is_distinct_from(col("amount"))
    )


def test_literals():
    assert parse_expression("'it''s'").same_as(lit("it's"))
    assert parse_expression("TRUE").same_as(lit(True))
    assert parse_expression("NULL").same_as(lit(None))
    assert parse_expression("42").same_as(lit(42))
    # as Flink SQL types them: an exact DECIMAL, a DOUBLE with an exponent
    assert parse_expression("1.5").same_as(lit(decimal.Decimal("1.5")))
    assert parse_expression("1.5E3").same_as(lit(1500.0))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("UPPER(name)", col("name").upper_case),
        ("upper(name)", col("name").upper_case),
        ("LENGTH(name)", col("name").char_length),
        ("CHAR_LENGTH(name)", col("name").char_length),
        ("name || '!'", concat(col("name"), "!")),
        ("COALESCE(amount, 0)", coalesce(col("amount"), 0)),
        ("COUNT(*)", call("count")),
        ("SUM(amount)", col("amount").sum),
        ("IF(amount > 1, 1, 2)", if_then_else(col("amount") > 1, 1, 2)),
        ("TRIM(name)", call("trim", col("name"))),
        ("LTRIM(name)", call("ltrim", col("name"))),
        ("RTRIM(name)", call("rtrim", col("name"))),
        ("LPAD(name, 5, 'x')", call("lpad", col("name"), 5, "x")),
        ("RPAD(name, 5, 'x')", call("rpad", col("name"), 5, "x")),
        ("INITCAP(name)", call("initcap", col("name"))),
        ("LOG10(amount)", call("log10", col("amount"))),
        ("DAYOFMONTH(o_rowtime)", call("dayofmonth", col("o_rowtime"))),
        ("YEAR(o_rowtime)", call("year", col("o_rowtime"))),
        ("CURRENT_TIMESTAMP", call("current_timestamp")),
    ],
)
def test_functions(text, expected):
    e = parse_expression(text)
    assert e.same_as(expected), f"{text} parsed to {e}, expected {expected}"
    e.type_in(ROW)  # typable


def test_unknown_function_stays_unresolved():
    e = parse_expression("my_func(amount)")
    assert isinstance(e, UnresolvedCall)
    assert e.name == "my_func"
    assert isinstance(e.args[0], Column)


@pytest.mark.parametrize(
    "text",
    [
        "(SELECT 1)",
        "amount IN (SELECT id FROM t)",
        "EXISTS (SELECT 1)",
        "amount + (SELECT MAX(id) FROM t)",
    ],
)
def test_subqueries_are_rejected(text):
    with pytest.raises(ValidationError, match="Subqueries are not allowed in the expression"):
        parse_expression(text)


@pytest.mark.parametrize("text", ["amount +", "amount * * 2", "CASE WHEN END", "((amount"])
def test_unparsable_text(text):
    with pytest.raises(ValidationError, match="Cannot parse SQL expression"):
        parse_expression(text)


def test_qualified_columns_are_rejected():
    with pytest.raises(
        ValidationError,
        match=r"Qualified column 'o\.amount' in 'o\.amount \+ 1': "
        r"refer to columns by name only",
    ):
        parse_expression("o.amount + 1")


@pytest.mark.parametrize(
    "expr",
    [
        col("amount") * 2 + 1,
        col("o_rowtime") - lit(5).seconds,
        col("o_rowtime") + lit(1500).millis,
        col("amount").between(1, 10),
        col("amount").in_(1, 2),
        col("name").is_null,
        col("amount").cast("DECIMAL(10, 2)"),
        col("o_rowtime").cast("TIMESTAMP_LTZ(3)"),
        if_then_else(col("amount") > 1, "a", "b"),
        col("name").upper_case,
        col("name").char_length,
        concat(col("name"), "x"),
        col("name").like("a%"),
        col("id").is_not_distinct_from(col("amount")),
        col("id").is_distinct_from(col("amount")),
        call("ltrim", col("name")),
        call("dayofmonth", col("o_rowtime")),
        call("proctime"),
        (col("amount") > 1) & ~(col("id") < 0) | col("name").is_null,
        -col("amount") % 3,
    ],
)
def test_str_of_an_expression_parses_back_to_the_same_tree(expr):
    """Schemas persist computed columns as str(expr); the text must parse back."""
    back = parse_expression(str(expr))
    assert back.same_as(expr), f"{expr} came back as {back}"
    assert back.type_in(ROW) == expr.type_in(ROW)
