"""Expression trees -> Spark Connect columns."""

from __future__ import annotations

import decimal
from collections.abc import Callable
from typing import Any

from pyspark.sql import Column as SparkColumn
from pyspark.sql.connect import functions as F

from tableapi.errors import ValidationError
from tableapi.expressions import (
    Alias,
    Call,
    Cast,
    Column,
    Expression,
    InTable,
    Literal,
    UnresolvedCall,
    UserCall,
)
from tableapi.types import DataType, RowType, decimal_arithmetic, decimal_params
from tableapi.types import to_spark as spark_type

Op = Callable[..., SparkColumn]

# Operators and functions whose Spark form is not ``call_function(name, *args)``.
_OPS: dict[str, Op] = {
    "plus": lambda a, b: a + b,
    "minus": lambda a, b: a - b,
    "times": lambda a, b: a * b,
    "mod": lambda a, b: a % b,
    "negate": lambda a: -a,
    "equals": lambda a, b: a == b,
    "not_equals": lambda a, b: a != b,
    "less_than": lambda a, b: a < b,
    "less_than_or_equal": lambda a, b: a <= b,
    "greater_than": lambda a, b: a > b,
    "greater_than_or_equal": lambda a, b: a >= b,
    "is_not_distinct_from": lambda a, b: a.eqNullSafe(b),
    "is_distinct_from": lambda a, b: ~a.eqNullSafe(b),
    "between": lambda a, lo, hi: a.between(lo, hi),
    "not_between": lambda a, lo, hi: ~a.between(lo, hi),
    "in": lambda a, *vs: a.isin(*vs),
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "not": lambda a: ~a,
    "is_null": lambda a: a.isNull(),
    "is_not_null": lambda a: a.isNotNull(),
    "if": lambda c, a, b: F.when(c, a).otherwise(b),
    "asc": lambda a: a.asc(),
    "desc": lambda a: a.desc(),
    "count": lambda *a: F.count(a[0] if a else F.lit(1)),
}
# Spark gives another type than Flink for these: cast to the type the plan derived.
_CAST_RESULT = {
    "floor",
    "ceil",
    "year",
    "quarter",
    "month",
    "dayofmonth",
    "hour",
    "minute",
    "second",
    "sign",
}


def cast(value: SparkColumn, source: DataType, to: DataType) -> SparkColumn:
    """``CAST(value AS to)`` with Flink's text for a BOOLEAN ('TRUE', where Spark writes
    'true') and a TIMESTAMP(p) (p fraction digits always: '10:00:00.500', where Spark drops
    trailing zeros); otherwise Spark's cast, which writes numbers, dates and decimals as
    Flink does."""
    if to.is_string and source.name == "BOOLEAN":
        return F.upper(value.cast("string"))
    if to.is_string and source.is_timestamp:
        digits = source.params[0] if source.params else 6
        fraction = "." + "S" * digits if digits else ""
        return F.date_format(value, "yyyy-MM-dd HH:mm:ss" + fraction)
    return value.cast(to.spark_ddl)


def ref(name: str) -> SparkColumn:
    """A column reference that survives dots and spaces in names."""
    return F.col("`" + name.replace("`", "``") + "`")


def to_spark(expr: Expression, row: RowType) -> SparkColumn:
    """Compile ``expr``, whose columns come from ``row``, to a Spark column."""
    if isinstance(expr, Column):
        return ref(expr.name)
    if isinstance(expr, Literal):
        return _literal(expr)
    if isinstance(expr, Alias):
        return to_spark(expr.expr, row).alias(expr.name)
    if isinstance(expr, Cast):
        return cast(to_spark(expr.expr, row), expr.expr.type_in(row), expr.to)
    if isinstance(expr, UserCall):
        user = expr.function
        # An explicit type object and useArrow: F.udf would otherwise ask the *active* Spark
        # session (maybe another server's, or a stopped one) for its settings.
        spark_udf: Any = F.udf(user.func, returnType=spark_type(user.result_type), useArrow=False)
        if not user.deterministic:
            spark_udf = spark_udf.asNondeterministic()
        column: SparkColumn = spark_udf(*(to_spark(a, row) for a in expr.args))
        return column
    if isinstance(expr, Call):
        fn = expr.function
        args = [to_spark(a, row) for a in expr.args]
        if fn.name in _DECIMAL_ARITHMETIC:
            arg_types = [a.type_in(row) for a in expr.args]
            exact = decimal_arithmetic(fn.name, arg_types[0], arg_types[1])
            if exact is not None:
                # Spark's DECIMAL arithmetic types are Flink's (tests/conformance/README.md,
                # difference 15) for DECIMAL operands, but it takes an integer literal as
                # the narrowest DECIMAL (3: DECIMAL(1, 0), a quotient with fewer digits) and a
                # BIGINT as DECIMAL(20, 0): give Spark Flink's DECIMAL of each integral side.
                args = [
                    c.cast(DataType("DECIMAL", decimal_params(t)).spark_ddl) if t.is_integral else c
                    for t, c in zip(arg_types, args, strict=True)
                ]
                left, right = args
                value = left / right if fn.name == "divide" else _OPS[fn.name](left, right)
                return value.cast(exact.spark_ddl)
        flink = _FLINK_SEMANTICS.get(fn.name)
        if flink is not None:
            return flink(args, expr.type_in(row))
        if fn.aggregate and fn.name != "count":
            return _aggregate(fn.name, args, expr.type_in(row))
        if fn.name in _OPS:
            return _OPS[fn.name](*args)
        result = F.call_function(fn.spark_name or fn.name, *args)
        if fn.name in _CAST_RESULT:
            result = result.cast(expr.type_in(row).spark_ddl)
        return result
    if isinstance(expr, InTable | UnresolvedCall):
        raise ValidationError(f"{expr} should have been resolved before compiling.")
    raise TypeError(f"cannot compile {type(expr).__name__}")


_DECIMAL_ARITHMETIC = ("plus", "minus", "times", "divide", "mod")


def _literal(expr: Literal) -> SparkColumn:
    """A literal; a NULL with its type, a decimal with exactly its Flink type (the Table
    API's 0.5: DECIMAL(1, 1), SQL's 0.5: DECIMAL(2, 1); Spark Connect would send a wider
    one, and decimal arithmetic scales follow the operands' precisions)."""
    value = F.lit(expr.value)
    if expr.value is None or isinstance(expr.value, decimal.Decimal):
        return value.cast(expr.type.spark_ddl)
    return value


def _divide(a: SparkColumn, b: SparkColumn, result: DataType) -> SparkColumn:
    """``a / b`` as Flink divides: integers to an integer (Spark's / gives a DOUBLE), floating
    numbers as Java does: ``x / 0`` is +-Infinity (NaN for 0 / 0) where Spark fails the query
    (ANSI mode), computed as ``a * +-Infinity`` with the zero's sign
    (``atan2(-0.0, -1) < 0``)."""
    if result.is_integral:
        return F.call_function("div", a, b).cast(result.spark_ddl)
    if result.name in ("FLOAT", "DOUBLE"):
        inf = F.lit(float("inf"))
        signed = F.when(F.atan2(b, F.lit(-1.0)) < 0, -inf).otherwise(inf)
        return F.when(b == 0, a * signed).otherwise(a / b)
    return a / b


def _aggregate(name: str, args: list[SparkColumn], result: DataType) -> SparkColumn:
    """An aggregate call (batch mode) with Flink's result type: SUM in the argument's type,
    AVG the sum divided by the count in it (an integral average truncated toward zero, as
    Flink's BIGINT division), the DISTINCT forms over distinct values.

    >>> str(_aggregate("avg", [F.col("x")], DataType.parse("INT")))
    "Column<'CAST(CallFunction('div', sum(x), count(x)) AS INT)'>"
    """
    base, distinct = name.removesuffix("_distinct"), name.endswith("_distinct")
    x = args[0]
    if base == "count":
        return F.count_distinct(x)
    if base in ("min", "max"):
        return F.min(x) if base == "min" else F.max(x)
    total = F.sum_distinct(x) if distinct else F.sum(x)
    if base == "sum":
        return total.cast(result.spark_ddl)
    count = F.count_distinct(x) if distinct else F.count(x)
    if result.is_integral:
        return F.call_function("div", total, count).cast(result.spark_ddl)
    return (total / count).cast(result.spark_ddl)


def _regexp_extract(args: list[SparkColumn]) -> SparkColumn:
    """Flink's REGEXP_EXTRACT(str, regex [, index]): NULL where the regex finds no match
    (Spark's gives ''), and the whole match where no index is given (Spark's default is 1),
    as Flink 2.3 answers. Left: a group that does not take part in the match (``a(x)?b`` of
    'ab', group 1) is NULL on Flink and '' here (Spark's functions cannot tell).

    >>> text = str(_regexp_extract([F.col("s"), F.lit("a(b)")]))
    >>> "CASE WHEN CallFunction('rlike', s, a(b)) THEN CallFunction('regexp_extract'" in text
    True
    """
    s, pattern = args[0], args[1]
    index = args[2] if len(args) > 2 else F.lit(0)
    extracted = F.call_function("regexp_extract", s, pattern, index)
    return F.when(F.call_function("rlike", s, pattern), extracted)


def _initcap(s: SparkColumn) -> SparkColumn:
    """Flink's INITCAP (Calcite's): a word is a run of ASCII letters and digits; its first
    letter is upper-cased and its other ASCII letters lower-cased, other characters kept.
    Spark's initcap splits on spaces only and changes every letter ('a_b' -> 'A_b', Flink
    'A_B'; 'émile' -> 'Émile', Flink 'éMile')."""
    chars = F.split(s, "")

    def one(c: SparkColumn, i: SparkColumn) -> SparkColumn:
        starts = (i == 0) | ~F.element_at(chars, i).rlike("^[A-Za-z0-9]$")
        ascii_letter = c.rlike("^[A-Za-z]$")
        return F.when(ascii_letter & starts, F.upper(c)).when(ascii_letter, F.lower(c)).otherwise(c)

    return F.when(s == "", s).otherwise(F.array_join(F.transform(chars, one), ""))


#: Functions whose Spark namesake answers otherwise than Flink: (arguments, result type) ->
#: Flink's answer.
_FLINK_SEMANTICS: dict[str, Callable[[list[SparkColumn], DataType], SparkColumn]] = {
    "divide": lambda args, result: _divide(args[0], args[1], result),
    "initcap": lambda args, result: _initcap(args[0]),
    "regexp_extract": lambda args, result: _regexp_extract(args),
}
