"""Expression building: the fluent operators, their str() rendering and their errors."""

from __future__ import annotations

import datetime as dt

import pytest

from tableapi import ValidationError, and_, call, coalesce, col, concat, if_then_else, lit, udf
from tableapi.expressions import (
    Alias,
    Call,
    Cast,
    Column,
    InTable,
    Literal,
    UnresolvedCall,
    UserCall,
    conjuncts,
    contains_aggregate,
    is_aggregate,
    strip_alias,
    to_expression,
)
from tableapi.types import BIGINT, INT, STRING, DataType, RowType

ROW = RowType.of(("a", INT), ("b", BIGINT), ("s", STRING))


# -- rendering --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expr", "text"),
    [
        ((col("amount") * 2 + 1).alias("x"), "((amount * 2) + 1) AS x"),
        (col("a") + col("b") * col("c"), "(a + (b * c))"),
        ((col("a") + col("b")) * col("c"), "((a + b) * c)"),
        (col("a") - col("b") - col("c"), "((a - b) - c)"),
        (col("a") - (col("b") - col("c")), "(a - (b - c))"),
        (col("a") / col("b") % 3, "((a / b) % 3)"),
        (-col("a") * 2, "(-(a) * 2)"),
        (2 * col("a"), "(2 * a)"),
        (10 - col("a"), "(10 - a)"),
        (1 / col("a"), "(1 / a)"),
        (1 + col("a"), "(1 + a)"),
        ((col("a") > 1) | (col("b") < 2) & col("c"), "((a > 1) OR ((b < 2) AND c))"),
        (((col("a") > 1) | (col("b") < 2)) & col("c"), "(((a > 1) OR (b < 2)) AND c)"),
        (~(col("a") == 1), "NOT((a = 1))"),
        (col("a") != 1, "(a <> 1)"),
        (col("a") <= col("b"), "(a <= b)"),
        (col("a") >= col("b"), "(a >= b)"),
        (col("s").like("E%"), "(s LIKE 'E%')"),
        (col("a").is_not_distinct_from(col("b")), "(a IS NOT DISTINCT FROM b)"),
        (col("a").is_distinct_from(col("b")), "(a IS DISTINCT FROM b)"),
        (col("a").asc, "a ASC"),
        (col("a").desc, "a DESC"),
    ],
)
def test_operators_render_with_explicit_parentheses(expr, text):
    assert str(expr) == text


def test_literals_render_as_sql():
    assert str(lit("it's")) == "'it''s'"
    assert str(lit(True)) == "TRUE"
    assert str(lit(False)) == "FALSE"
    assert str(lit(None)) == "NULL"
    assert str(lit(42)) == "42"
    assert str(lit(2.5)) == "2.5"


def test_repr_reads_like_the_api():
    assert repr(col("a")) == "col('a')"
    assert repr(lit(1)) == "lit(1)"
    assert repr(call("UPPER", col("s"))) == "call('upper', col('s'))"


# -- interval literals ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expr", "text", "delta"),
    [
        (lit(4).hours, "INTERVAL '4' HOUR", dt.timedelta(hours=4)),
        (lit(1).hour, "INTERVAL '1' HOUR", dt.timedelta(hours=1)),
        (lit(5).seconds, "INTERVAL '5' SECOND", dt.timedelta(seconds=5)),
        (lit(90).minutes, "INTERVAL '90' MINUTE", dt.timedelta(minutes=90)),
        (lit(120).minutes, "INTERVAL '2' HOUR", dt.timedelta(hours=2)),
        (lit(2).days, "INTERVAL '2' DAY", dt.timedelta(days=2)),
        (lit(1500).millis, "INTERVAL '1.5' SECOND", dt.timedelta(milliseconds=1500)),
        (lit(-5).seconds, "INTERVAL '-5' SECOND", dt.timedelta(seconds=-5)),
    ],
)
def test_interval_literals(expr, text, delta):
    assert isinstance(expr, Literal)
    assert str(expr) == text
    assert expr.value == delta
    assert expr.type == DataType("INTERVAL", (), nullable=False)


def test_interval_in_an_expression():
    assert str(col("o_rowtime") - lit(5).seconds) == "(o_rowtime - INTERVAL '5' SECOND)"


@pytest.mark.parametrize("bad", [col("a"), lit("x"), lit(True), col("a") + 1])
def test_interval_needs_a_number_literal(bad):
    with pytest.raises(ValidationError, match=r"\.hours makes an interval from a number literal"):
        _ = bad.hours


# -- named methods ----------------------------------------------------------------------------
def test_in_with_values():
    e = col("a").in_(1, 2, 3)
    assert isinstance(e, Call) and e.name == "in"
    assert str(e) == "(a IN (1, 2, 3))"
    assert len(e.args) == 4


def test_in_needs_a_value():
    with pytest.raises(ValidationError, match=r"in_\(\) needs at least one value or a table"):
        col("a").in_()


def test_in_with_a_table_builds_an_in_table_node(env):
    t = env.from_elements([(1,)], ["id"])
    e = col("a").in_(t)
    assert isinstance(e, InTable)
    assert e.query is t._plan
    assert str(e) == "(a IN <table id>)"


def test_between_and_not_between():
    e = col("t").between(col("s") - lit(4).hours, col("s"))
    assert str(e) == "(t BETWEEN (s - INTERVAL '4' HOUR) AND s)"
    assert str(col("a").not_between(1, 5)) == "(a NOT BETWEEN 1 AND 5)"


def test_null_checks():
    assert str(col("a").is_null) == "(a IS NULL)"
    assert str(col("a").is_not_null) == "(a IS NOT NULL)"
    assert col("a").is_null.type_in(ROW) == DataType("BOOLEAN", nullable=False)


def test_cast():
    e = col("a").cast("BIGINT")
    assert isinstance(e, Cast)
    assert e.to == BIGINT
    assert str(e) == "CAST(a AS BIGINT)"
    assert str(col("a").cast("DECIMAL(10, 2)")) == "CAST(a AS DECIMAL(10, 2))"
    assert e.output_name is None


def test_cast_to_an_unknown_type():
    with pytest.raises(ValidationError, match=r"Unknown data type 'BIGGERINT'\. Known types: "):
        col("a").cast("BIGGERINT")


def test_alias():
    e = (col("a") + 1).alias("b")
    assert isinstance(e, Alias)
    assert e.output_name == "b"
    assert str(e) == "(a + 1) AS b"
    assert e.type_in(ROW) == INT
    assert strip_alias(e).same_as(col("a") + 1)
    assert col("a").output_name == "a"
    assert (col("a") + 1).output_name is None
    assert col("a").desc.output_name == "a"


def test_alias_needs_a_name():
    with pytest.raises(ValidationError, match="alias\\(\\) needs a non-empty column name, got ''"):
        col("a").alias("")


def test_if_then_else():
    e = if_then_else(col("a") > 1, "big", "small")
    assert isinstance(e, Call) and e.name == "if"
    assert str(e) == "IF((a > 1), 'big', 'small')"
    assert e.type_in(ROW) == DataType("STRING", nullable=False)


def test_call_builtin_by_name_is_case_insensitive():
    e = call("UPPER", col("s"))
    assert isinstance(e, Call)
    assert e.name == "upper"
    assert str(e) == "UPPER(s)"
    assert e.same_as(col("s").upper_case)
    assert call("upper_case", col("s")).same_as(e)
    assert call("if_then_else", col("a") > 1, 1, 2).name == "if"
    assert call("substr", col("s"), 1).name == "substring"


def test_call_of_an_unknown_name_is_resolved_later():
    e = call("my_func", col("a"), 1)
    assert isinstance(e, UnresolvedCall)
    assert str(e) == "my_func(a, 1)"
    with pytest.raises(ValidationError, match=r"Unknown function 'my_func'\. Register it first"):
        e.type_in(ROW)


def test_unknown_builtin_call_fails_at_once():
    pattern = r"Unknown function 'frobnicate'\. Built-in functions: abs, .*, year\. Register"
    with pytest.raises(ValidationError, match=pattern):
        Call("frobnicate", (col("a"),))


def test_call_with_a_udf_object():
    plus_one = udf(lambda x: x + 1, result_type="BIGINT", name="plus_one")
    e = call(plus_one, col("a"))
    assert isinstance(e, UserCall)
    assert str(e) == "plus_one(a)"
    assert e.type_in(ROW) == BIGINT
    with pytest.raises(ValidationError, match="Column 'zz' not found"):
        plus_one(col("zz")).type_in(ROW)


def test_udf_name_defaults_to_the_function_name():
    def twice(x):
        return 2 * x

    f = udf(twice, "INT")
    assert f.name == "twice"
    assert f.result_type == INT


def test_coalesce_concat_and_():
    assert str(coalesce(col("a"), 0)) == "COALESCE(a, 0)"
    assert str(concat(col("s"), "-", col("s"))) == "CONCAT(s, '-', s)"
    assert (
        str(and_(col("a") > 1, col("b") > 2, col("s").is_null))
        == "(((a > 1) AND (b > 2)) AND (s IS NULL))"
    )
    assert str(and_()) == "TRUE"


# -- truth value ------------------------------------------------------------------------------
def test_python_and_on_expressions_is_an_error():
    with pytest.raises(
        ValidationError,
        match=r"An expression has no truth value: \(a > 1\)\. "
        r"Combine conditions with & \| ~",
    ):
        _ = (col("a") > 1) and (col("b") > 2)


def test_python_or_on_expressions_is_an_error():
    with pytest.raises(ValidationError, match="no truth value"):
        _ = (col("a") > 1) or (col("b") > 2)


def test_python_not_and_if_on_expressions_are_errors():
    with pytest.raises(ValidationError, match=r"no truth value: \(a = 1\)"):
        _ = not (col("a") == 1)
    with pytest.raises(ValidationError, match="instead of and/or/not"):
        if col("a") == 1:
            pass


def test_chained_comparison_is_an_error():
    with pytest.raises(ValidationError, match="no truth value"):
        _ = 1 < col("a") < 3


# -- constructors and helpers -----------------------------------------------------------------
@pytest.mark.parametrize("bad", ["", 5, None])
def test_col_needs_a_name(bad):
    with pytest.raises(ValidationError, match="col\\(\\) needs a column name"):
        col(bad)


def test_lit_of_an_unsupported_python_value():
    with pytest.raises(ValidationError, match="of Python type object as a literal"):
        lit(object())


def test_lit_passes_expressions_through_and_takes_a_type():
    c = col("a")
    assert lit(c) is c
    e = lit(None, "INT")
    assert e.type == INT
    assert e.type_in(ROW) == INT


def test_to_expression():
    assert isinstance(to_expression("a"), Column)
    assert to_expression("a").name == "a"
    with pytest.raises(ValidationError, match="Expected an expression such as col\\('x'\\), got 5"):
        to_expression(5)


def test_structural_identity():
    assert (col("a") + 1).same_as(col("a") + 1)
    assert not (col("a") + 1).same_as(col("a") + 2)
    assert not (col("a") + 1).same_as(col("b") + 1)
    assert hash(col("a") + 1) == hash(col("a") + 1)
    assert lit(4).hours.same_as(lit(dt.timedelta(hours=4)))


def test_walk_transform_and_column_names():
    e = (col("a") + col("b")) * col("a")
    assert [str(n) for n in e.walk()] == ["((a + b) * a)", "(a + b)", "a", "b", "a"]
    assert e.column_names() == {"a", "b"}
    renamed = e.transform(
        lambda n: Column("x") if isinstance(n, Column) and n.name == "a" else None
    )
    assert str(renamed) == "((x + b) * x)"
    assert str(e) == "((a + b) * a)"  # immutable


def test_conjuncts_and_aggregates():
    e = (col("a") > 1) & ((col("b") > 2) & (col("s") == "x"))
    assert [str(t) for t in conjuncts(e)] == ["(a > 1)", "(b > 2)", "(s = 'x')"]
    assert [str(t) for t in conjuncts((col("a") > 1) | (col("b") > 2))] == ["((a > 1) OR (b > 2))"]
    assert is_aggregate(col("a").sum)
    assert not is_aggregate(col("a").sum + 1)
    assert contains_aggregate(col("a").sum + 1)
    assert not contains_aggregate(col("a") + 1)


@pytest.mark.parametrize(
    ("text", "type_"),
    [
        ("FLOOR(m)", "DECIMAL(10, 0)"),  # Flink 2.3: FLOOR(DECIMAL(10, 2)) is DECIMAL(10, 0)
        ("CEIL(m)", "DECIMAL(10, 0)"),
        ("FLOOR(d)", "DOUBLE"),
        ("SIGN(i)", "INT"),  # Spark's signum is a DOUBLE: the compiler casts it
        ("SIGN(m)", "DECIMAL(10, 2)"),
    ],
)
def test_result_types_are_flinks(text: str, type_: str) -> None:
    from tableapi.sql_expressions import parse_expression
    from tableapi.types import DataType, RowType

    row = RowType.of(("m", DataType.parse("DECIMAL(10, 2)")), ("d", DataType.parse("DOUBLE")),
                     ("i", DataType.parse("INT")))  # fmt: skip
    assert parse_expression(text).type_in(row) == DataType.parse(type_)
