"""The built-in functions: names, arity, result types and how explain() shows them.

One registry serves the fluent API (``col("a").upper_case``), ``call("UPPER", ...)`` and
SQL-string expressions. The compiler maps each name to Spark (``compiler/functions.py``).

Example::

    >>> lookup("upper").result_type([STRING])
    DataType('STRING')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from tableapi.errors import ValidationError
from tableapi.types import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    INT,
    STRING,
    TIMESTAMP_3,
    TIMESTAMP_LTZ_3,
    DataType,
    TimeKind,
    common_type,
    decimal_arithmetic,
)

TypeRule = Callable[[str, Sequence[DataType]], DataType]


@attrs.frozen
class FunctionDef:
    """A built-in function or operator."""

    name: str  # canonical lower-case name used in expression trees
    rule: TypeRule = attrs.field(repr=False)
    min_args: int = 1
    max_args: int | None = 1  # None: any number
    infix: str | None = None  # shown as ``(a <infix> b)`` by explain()
    aggregate: bool = False
    spark_name: str | None = None  # Spark SQL function, when it differs from ``name``

    def result_type(self, arg_types: Sequence[DataType]) -> DataType:
        if len(arg_types) < self.min_args or (
            self.max_args is not None and len(arg_types) > self.max_args
        ):
            want = (
                f"{self.min_args}"
                if self.min_args == self.max_args
                else f"{self.min_args} or more"
                if self.max_args is None
                else f"{self.min_args} to {self.max_args}"
            )
            raise ValidationError(
                f"{self.name.upper()} takes {want} argument(s), got {len(arg_types)}."
            )
        return self.rule(self.name, arg_types)


def _nullable(types: Sequence[DataType]) -> bool:
    return any(t.nullable for t in types)


def _fail(name: str, types: Sequence[DataType], want: str) -> ValidationError:
    got = ", ".join(str(t) for t in types)
    return ValidationError(f"{name.upper()} needs {want}; got ({got}).")


def _arith(name: str, types: Sequence[DataType]) -> DataType:
    left, right = types
    if name in ("plus", "minus") and left.is_timestamp and right.name == "INTERVAL":
        return left.plain().with_nullable(_nullable(types))
    if name == "plus" and left.name == "INTERVAL" and right.is_timestamp:
        return right.plain().with_nullable(_nullable(types))
    if left.name == right.name == "INTERVAL" and name in ("plus", "minus"):
        return left
    wide = common_type(left, right)
    if wide is None or not wide.is_numeric:
        raise _fail(name, types, "numeric operands (or a timestamp and an interval)")
    exact = decimal_arithmetic(name, left, right)
    if exact is not None:
        return exact
    if name == "divide" and not wide.is_integral and wide.name != "DECIMAL":
        return DOUBLE.with_nullable(wide.nullable)
    return wide


def _mod(name: str, types: Sequence[DataType]) -> DataType:
    if not all(t.is_integral for t in types):
        raise _fail(name, types, "integer operands")
    return _arith("plus", types)


def _negate(name: str, types: Sequence[DataType]) -> DataType:
    if not (types[0].is_numeric or types[0].name == "INTERVAL"):
        raise _fail(name, types, "a numeric operand")
    return types[0].plain()


def _compare(name: str, types: Sequence[DataType]) -> DataType:
    wide = types[0]
    for other in types[1:]:
        next_wide = common_type(wide, other)
        if next_wide is None:
            raise _fail(name, types, "operands of comparable types (cast one side)")
        wide = next_wide
    return BOOLEAN.with_nullable(_nullable(types) and name not in _NULL_SAFE)


_NULL_SAFE = {"is_not_distinct_from", "is_distinct_from"}


def _logical(name: str, types: Sequence[DataType]) -> DataType:
    if not all(t.name in ("BOOLEAN", "NULL") for t in types):
        raise _fail(name, types, "BOOLEAN operands")
    return BOOLEAN.with_nullable(_nullable(types))


def _null_check(name: str, types: Sequence[DataType]) -> DataType:
    return BOOLEAN.with_nullable(False)


def _like(name: str, types: Sequence[DataType]) -> DataType:
    if not all(t.is_string or t.name == "NULL" for t in types):
        raise _fail(name, types, "STRING operands")
    return BOOLEAN.with_nullable(_nullable(types))


def _if(name: str, types: Sequence[DataType]) -> DataType:
    if types[0].name not in ("BOOLEAN", "NULL"):
        raise _fail(name, types, "a BOOLEAN condition first")
    wide = common_type(types[1], types[2])
    if wide is None:
        raise _fail(name, types, "branches of a common type (cast one branch)")
    return wide


def _coalesce(name: str, types: Sequence[DataType]) -> DataType:
    wide = types[0]
    for other in types[1:]:
        next_wide = common_type(wide, other)
        if next_wide is None:
            raise _fail(name, types, "arguments of a common type")
        wide = next_wide
    return wide.with_nullable(all(t.nullable for t in types))


def _same_as_first(name: str, types: Sequence[DataType]) -> DataType:
    return types[0].plain()


def _string_result(name: str, types: Sequence[DataType]) -> DataType:
    if not (types[0].is_string or types[0].name == "NULL"):
        raise _fail(name, types, "a STRING first argument (cast it)")
    return STRING.with_nullable(_nullable(types))


def _any_to_string(name: str, types: Sequence[DataType]) -> DataType:
    return STRING.with_nullable(_nullable(types))


def _to_int(name: str, types: Sequence[DataType]) -> DataType:
    return INT.with_nullable(_nullable(types))


def _to_bigint(name: str, types: Sequence[DataType]) -> DataType:
    return BIGINT.with_nullable(_nullable(types))


def _numeric_same(name: str, types: Sequence[DataType]) -> DataType:
    if not types[0].is_numeric:
        raise _fail(name, types, "a numeric argument")
    return types[0].plain().with_nullable(_nullable(types))


def _to_integer_value(name: str, types: Sequence[DataType]) -> DataType:
    """FLOOR and CEIL: the argument's type, a DECIMAL(p, s) as DECIMAL(p, 0) (Flink's)."""
    result = _numeric_same(name, types)
    if result.name == "DECIMAL" and result.params[1:] != (0,):
        return DataType("DECIMAL", (result.params[0], 0), result.nullable)
    return result


def _to_double(name: str, types: Sequence[DataType]) -> DataType:
    if not all(t.is_numeric for t in types):
        raise _fail(name, types, "numeric arguments")
    return DOUBLE.with_nullable(_nullable(types))


def _time_field(name: str, types: Sequence[DataType]) -> DataType:
    if not (types[0].is_timestamp or types[0].name == "DATE"):
        raise _fail(name, types, "a DATE or TIMESTAMP argument")
    return BIGINT.with_nullable(_nullable(types))


def _fixed(result: DataType) -> TypeRule:
    return lambda name, types: result


def _proctime(name: str, types: Sequence[DataType]) -> DataType:
    return TIMESTAMP_LTZ_3.with_nullable(False).with_time_kind(TimeKind.PROCTIME)


def _sum(name: str, types: Sequence[DataType]) -> DataType:
    """Flink's SUM type: the argument's own (an INT sums to INT, wrapping as Java's int),
    DECIMAL(38, s) for a DECIMAL(p, s); always nullable (NULL over no non-NULL value)."""
    arg = types[0]
    if not arg.is_numeric:
        raise _fail(name, types, "a numeric argument")
    if arg.name == "DECIMAL":
        return DataType("DECIMAL", (38, arg.params[1]))
    return arg.plain().with_nullable(True)


def _avg(name: str, types: Sequence[DataType]) -> DataType:
    """Flink's AVG type: the argument's own (an INT average is an INT, truncated toward
    zero), DECIMAL(38, max(6, s)) for a DECIMAL(p, s); always nullable."""
    arg = types[0]
    if not arg.is_numeric:
        raise _fail(name, types, "a numeric argument")
    if arg.name == "DECIMAL":
        return DataType("DECIMAL", (38, max(6, arg.params[1])))
    return arg.plain().with_nullable(True)


def _min_max(name: str, types: Sequence[DataType]) -> DataType:
    return types[0].plain().with_nullable(True)


def _count(name: str, types: Sequence[DataType]) -> DataType:
    return BIGINT.with_nullable(False)


def _sort(name: str, types: Sequence[DataType]) -> DataType:
    return types[0]


_DEFS = [
    # operators
    FunctionDef("plus", _arith, 2, 2, infix="+"),
    FunctionDef("minus", _arith, 2, 2, infix="-"),
    FunctionDef("times", _arith, 2, 2, infix="*"),
    FunctionDef("divide", _arith, 2, 2, infix="/"),
    FunctionDef("mod", _mod, 2, 2, infix="%"),
    FunctionDef("negate", _negate),
    FunctionDef("equals", _compare, 2, 2, infix="="),
    FunctionDef("not_equals", _compare, 2, 2, infix="<>"),
    FunctionDef("less_than", _compare, 2, 2, infix="<"),
    FunctionDef("less_than_or_equal", _compare, 2, 2, infix="<="),
    FunctionDef("greater_than", _compare, 2, 2, infix=">"),
    FunctionDef("greater_than_or_equal", _compare, 2, 2, infix=">="),
    FunctionDef("is_not_distinct_from", _compare, 2, 2, infix="IS NOT DISTINCT FROM"),
    FunctionDef("is_distinct_from", _compare, 2, 2, infix="IS DISTINCT FROM"),
    FunctionDef("between", _compare, 3, 3),
    FunctionDef("not_between", _compare, 3, 3),
    FunctionDef("in", _compare, 2, None),
    FunctionDef("and", _logical, 2, 2, infix="AND"),
    FunctionDef("or", _logical, 2, 2, infix="OR"),
    FunctionDef("not", _logical),
    FunctionDef("is_null", _null_check),
    FunctionDef("is_not_null", _null_check),
    FunctionDef("like", _like, 2, 2, infix="LIKE"),
    FunctionDef("if", _if, 3, 3),
    FunctionDef("coalesce", _coalesce, 1, None),
    FunctionDef("asc", _sort),
    FunctionDef("desc", _sort),
    # strings
    FunctionDef("upper", _string_result),
    FunctionDef("lower", _string_result),
    FunctionDef("initcap", _string_result),
    FunctionDef("trim", _string_result),
    FunctionDef("ltrim", _string_result),
    FunctionDef("rtrim", _string_result),
    FunctionDef("char_length", _to_int),
    FunctionDef("substring", _string_result, 2, 3),
    FunctionDef("replace", _string_result, 3, 3),
    FunctionDef("lpad", _string_result, 3, 3),
    FunctionDef("rpad", _string_result, 3, 3),
    FunctionDef("regexp_extract", _string_result, 2, 3),
    FunctionDef("concat", _any_to_string, 1, None),
    FunctionDef("concat_ws", _any_to_string, 2, None),
    # numbers
    FunctionDef("abs", _numeric_same),
    FunctionDef("round", _numeric_same, 1, 2),
    FunctionDef("floor", _to_integer_value),
    FunctionDef("ceil", _to_integer_value),
    FunctionDef("power", _to_double, 2, 2),
    FunctionDef("sqrt", _to_double),
    FunctionDef("exp", _to_double),
    FunctionDef("ln", _to_double),
    FunctionDef("log10", _to_double),
    FunctionDef("sign", _numeric_same),
    # time
    FunctionDef("proctime", _proctime, 0, 0, spark_name="current_timestamp"),
    FunctionDef("current_timestamp", _fixed(TIMESTAMP_LTZ_3.with_nullable(False)), 0, 0),
    FunctionDef("now", _fixed(TIMESTAMP_LTZ_3.with_nullable(False)), 0, 0),
    FunctionDef("current_date", _fixed(DATE.with_nullable(False)), 0, 0),
    FunctionDef("to_timestamp", _fixed(TIMESTAMP_3), 1, 2),
    FunctionDef("to_date", _fixed(DATE), 1, 2),
    FunctionDef("date_format", _any_to_string, 2, 2),
    FunctionDef("year", _time_field),
    FunctionDef("quarter", _time_field),
    FunctionDef("month", _time_field),
    FunctionDef("dayofmonth", _time_field),
    FunctionDef("hour", _time_field),
    FunctionDef("minute", _time_field),
    FunctionDef("second", _time_field),
    FunctionDef("unix_timestamp", _to_bigint, 0, 2),
    # aggregates
    FunctionDef("sum", _sum, aggregate=True),
    FunctionDef("count", _count, 0, 1, aggregate=True),
    FunctionDef("avg", _avg, aggregate=True),
    FunctionDef("min", _min_max, aggregate=True),
    FunctionDef("max", _min_max, aggregate=True),
    # the DISTINCT forms (``col("x").count.distinct``): each distinct value once
    FunctionDef("sum_distinct", _sum, aggregate=True),
    FunctionDef("count_distinct", _count, aggregate=True),
    FunctionDef("avg_distinct", _avg, aggregate=True),
    FunctionDef("min_distinct", _min_max, aggregate=True),
    FunctionDef("max_distinct", _min_max, aggregate=True),
]

FUNCTIONS: dict[str, FunctionDef] = {f.name: f for f in _DEFS}
# Other spellings accepted by call() and SQL strings.
_SYNONYMS = {
    "+": "plus",
    "-": "minus",
    "*": "times",
    "/": "divide",
    "%": "mod",
    "=": "equals",
    "==": "equals",
    "<>": "not_equals",
    "!=": "not_equals",
    "<": "less_than",
    "<=": "less_than_or_equal",
    ">": "greater_than",
    ">=": "greater_than_or_equal",
    "ceiling": "ceil",
    "pow": "power",
    "character_length": "char_length",
    "length": "char_length",
    "substr": "substring",
    "day": "dayofmonth",
    "if_then_else": "if",
    "localtimestamp": "current_timestamp",
    "upper_case": "upper",
    "lower_case": "lower",
    "average": "avg",
    "mean": "avg",
}


#: Flink 2.3's SQL built-in functions (its SQL operator table and the built-in definitions SQL
#: resolves, as its ``SHOW FUNCTIONS`` lists them): a call of one the product lacks is named as
#: such, not taken for an unregistered user function.
FLINK_BUILTINS = frozenset(
    """
    ABS ACOS APPROX_COUNT_DISTINCT ARRAY_AGG ARRAY_APPEND ARRAY_CONCAT ARRAY_CONTAINS
    ARRAY_DISTINCT ARRAY_EXCEPT ARRAY_INTERSECT ARRAY_JOIN ARRAY_MAX ARRAY_MIN ARRAY_POSITION
    ARRAY_PREPEND ARRAY_REMOVE ARRAY_REVERSE ARRAY_SLICE ARRAY_SORT ARRAY_UNION ASCII ASIN ATAN
    ATAN2 AVG BIN BITMAP_AND BITMAP_ANDNOT BITMAP_AND_AGG BITMAP_AND_CARDINALITY_AGG
    BITMAP_BUILD BITMAP_BUILD_AGG BITMAP_BUILD_CARDINALITY_AGG BITMAP_CARDINALITY
    BITMAP_FROM_BYTES BITMAP_OR BITMAP_OR_AGG BITMAP_OR_CARDINALITY_AGG BITMAP_TO_ARRAY
    BITMAP_TO_BYTES BITMAP_TO_STRING BITMAP_XOR BITMAP_XOR_AGG BITMAP_XOR_CARDINALITY_AGG BTRIM
    CARDINALITY CEIL CEILING CHARACTER_LENGTH CHAR_LENGTH CHR COALESCE COLLECT CONCAT CONCAT_WS
    CONVERT_TZ COS COSH COT COUNT CUME_DIST CURRENT_DATABASE CURRENT_DATE CURRENT_ROW_TIMESTAMP
    CURRENT_TIME CURRENT_TIMESTAMP CURRENT_WATERMARK DATE_FORMAT DAYOFMONTH DAYOFWEEK DAYOFYEAR
    DECODE DEGREES DENSE_RANK E ELEMENT ELT ENCODE ENDSWITH EXP FIRST_VALUE FLOOR FROM_BASE64
    FROM_UNIXTIME GREATEST GROUPING GROUPING_ID GROUP_ID HASH_CODE HEX HOUR IF IFNULL INET_ATON
    INET_NTOA INITCAP INSTR IS_ALPHA IS_DECIMAL IS_DIGIT IS_JSON JSON JSON_ARRAY JSON_ARRAYAGG
    JSON_EXISTS JSON_OBJECT JSON_OBJECTAGG JSON_QUERY JSON_QUOTE JSON_STRING JSON_UNQUOTE
    JSON_VALUE LAG LAST_VALUE LEAD LEAST LEFT LISTAGG LN LOCALTIME LOCALTIMESTAMP LOCATE LOG
    LOG10 LOG2 LOWER LPAD LTRIM MAP_ENTRIES MAP_FROM_ARRAYS MAP_KEYS MAP_UNION MAP_VALUES MAX
    MD5 MIN MINUTE MOD MONTH NOW NTILE NULLIF OBJECT_OF OBJECT_UPDATE OVERLAY PARSE_JSON
    PARSE_URL PERCENTILE PERCENT_RANK PI POWER PRINT PRINTF PROCTIME QUARTER RADIANS RAND
    RAND_INTEGER RANK REGEXP REGEXP_COUNT REGEXP_EXTRACT REGEXP_EXTRACT_ALL REGEXP_INSTR
    REGEXP_REPLACE REGEXP_SUBSTR REPEAT REPLACE REVERSE RIGHT ROUND ROW_NUMBER RPAD RTRIM SECOND
    SHA1 SHA2 SHA224 SHA256 SHA384 SHA512 SIGN SIN SINH SOURCE_WATERMARK SPLIT SPLIT_INDEX SQRT
    STARTSWITH STDDEV STDDEV_POP STDDEV_SAMP STR_TO_MAP SUBSTR SUM TAN TANH TIMESTAMPADD
    TIMESTAMPDIFF TO_BASE64 TO_DATE TO_TIMESTAMP TO_TIMESTAMP_LTZ TRUNCATE TRY_PARSE_JSON TYPEOF
    UNHEX UNIX_TIMESTAMP UPPER URL_DECODE URL_ENCODE UUID VARIANCE VAR_POP VAR_SAMP WEEK YEAR
    """.split()
)


def unsupported_builtin(name: str) -> bool:
    """Is ``name`` a Flink built-in function that the product does not have?

    >>> unsupported_builtin("split_index"), unsupported_builtin("upper"), unsupported_builtin("f")
    (True, False, False)
    """
    return name.upper() in FLINK_BUILTINS and not is_function(name)


def unknown_function(name: str, registered: Sequence[str] | None = None) -> ValidationError:
    """The error for a call of ``name``, neither built in nor among ``registered`` (the user
    functions, when known): a Flink built-in the product lacks is named as one.

    >>> print(unknown_function("json_value"))
    JSON_VALUE is a Flink built-in function that this product does not support (yet); SHOW \
FUNCTIONS lists the ones it has. To use your own: create_temporary_function('json_value', udf(...)).
    >>> print(unknown_function("twice", ["half"]))
    Unknown function 'twice'. Registered functions: ['half']; register it with \
create_temporary_function('twice', udf(...)).
    """
    if unsupported_builtin(name):
        return ValidationError(
            f"{name.upper()} is a Flink built-in function that this product does not support "
            "(yet); SHOW FUNCTIONS lists the ones it has. To use your own: "
            f"create_temporary_function({name!r}, udf(...))."
        )
    if registered is None:
        return ValidationError(
            f"Unknown function {name!r}. Register it first with "
            f"env.create_temporary_function({name!r}, udf(...)), or use a built-in."
        )
    return ValidationError(
        f"Unknown function {name!r}. Registered functions: {sorted(registered)}; register it "
        f"with create_temporary_function({name!r}, udf(...))."
    )


def lookup(name: str) -> FunctionDef:
    """The function of that name (case-insensitive); a clear error if there is none."""
    key = name.lower()
    key = _SYNONYMS.get(key, key)
    if key not in FUNCTIONS:
        if unsupported_builtin(name):
            raise unknown_function(name)
        public = sorted(n for n in FUNCTIONS if FUNCTIONS[n].infix is None)
        raise ValidationError(
            f"Unknown function {name!r}. Built-in functions: {', '.join(public)}. "
            "Register your own with env.create_temporary_function(name, udf(...))."
        )
    return FUNCTIONS[key]


def is_function(name: str) -> bool:
    key = name.lower()
    return _SYNONYMS.get(key, key) in FUNCTIONS


__all__ = [
    "FLINK_BUILTINS",
    "FUNCTIONS",
    "TIMESTAMP_3",
    "FunctionDef",
    "is_function",
    "lookup",
    "unknown_function",
    "unsupported_builtin",
]
