"""Flink SQL data types, as the client sees them, and their Spark counterparts.

Example::

    >>> DataType.parse("TIMESTAMP(3)")
    DataType('TIMESTAMP(3)')
    >>> DataType.parse("DECIMAL(10, 2)").spark_ddl
    'DECIMAL(10,2)'
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from collections.abc import Iterator
from enum import Enum
from typing import Any

import attrs

from tableapi.errors import ValidationError


class TimeKind(Enum):
    """What a timestamp column is to the planner (Flink's time attributes)."""

    NONE = ""
    ROWTIME = "*ROWTIME*"
    PROCTIME = "*PROCTIME*"
    #: A rowtime a regular join (or the versioned side of a temporal join) passed on: Flink's
    #: schema still marks it ``*ROWTIME*``, but its optimizer materializes it there, so no
    #: later operator takes it as event time (tests/conformance/README.md, difference 14).
    MATERIALIZED_ROWTIME = "*ROWTIME* (materialized)"

    @property
    def mark(self) -> str:
        """How a type shows this kind: Flink's spelling (a materialized rowtime is *ROWTIME*).

        >>> TimeKind.MATERIALIZED_ROWTIME.mark, TimeKind.PROCTIME.mark
        ('*ROWTIME*', '*PROCTIME*')
        """
        return TimeKind.ROWTIME.value if self is TimeKind.MATERIALIZED_ROWTIME else self.value


# Flink type name -> Spark DDL type name (parameters are carried over where both have them).
_SPARK_NAMES: dict[str, str] = {
    "BOOLEAN": "BOOLEAN",
    "TINYINT": "TINYINT",
    "SMALLINT": "SMALLINT",
    "INT": "INT",
    "BIGINT": "BIGINT",
    "FLOAT": "FLOAT",
    "DOUBLE": "DOUBLE",
    "DECIMAL": "DECIMAL",
    "STRING": "STRING",
    "BYTES": "BINARY",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "TIMESTAMP_LTZ": "TIMESTAMP",
    "INTERVAL": "INTERVAL DAY TO SECOND",
    "NULL": "VOID",
}
_ALIASES = {
    "INTEGER": "INT",
    "VARCHAR": "STRING",
    "CHAR": "STRING",
    "TEXT": "STRING",
    "LONG": "BIGINT",
    "SHORT": "SMALLINT",
    "BYTE": "TINYINT",
    "REAL": "FLOAT",
    "DOUBLE PRECISION": "DOUBLE",
    "NUMERIC": "DECIMAL",
    "DEC": "DECIMAL",
    "BINARY": "BYTES",
    "VARBINARY": "BYTES",
    "BOOL": "BOOLEAN",
    "TIMESTAMP WITHOUT TIME ZONE": "TIMESTAMP",
    "TIMESTAMP_NTZ": "TIMESTAMP",
    "TIMESTAMP WITH LOCAL TIME ZONE": "TIMESTAMP_LTZ",
    "TIMESTAMPLTZ": "TIMESTAMP_LTZ",  # how sqlglot spells it in CAST(x AS TIMESTAMP_LTZ(3))
    "VOID": "NULL",
}
#: Numeric type names from narrow to wide, as SQL widens a comparison's or an operation's sides.
NUMERIC_ORDER = ("TINYINT", "SMALLINT", "INT", "BIGINT", "DECIMAL", "FLOAT", "DOUBLE")
_INTEGRAL = {"TINYINT", "SMALLINT", "INT", "BIGINT"}
_TYPE_RE = re.compile(r"^\s*([A-Za-z_ ]+?)\s*(?:\(\s*([0-9 ,]*)\s*\))?\s*(NOT NULL)?\s*$", re.I)


@attrs.frozen
class DataType:
    """A Flink SQL type: a name, optional parameters, nullability and a time kind.

    >>> products.row_type.field("price").type
    DataType('DOUBLE')
    >>> DataType.parse("DECIMAL(10, 2) NOT NULL").params
    (10, 2)
    """

    name: str
    params: tuple[int, ...] = ()
    nullable: bool = True
    time_kind: TimeKind = TimeKind.NONE

    @classmethod
    def parse(cls, text: str | DataType) -> DataType:
        """Parse a Flink type string such as ``BIGINT``, ``DECIMAL(10, 2)`` or ``INT NOT NULL``.

        >>> DataType.parse("INTEGER NOT NULL")
        DataType('INT NOT NULL')
        >>> DataType.parse("VARCHAR(20)"), DataType.parse("TIMESTAMP")
        (DataType('STRING'), DataType('TIMESTAMP(6)'))
        """
        if isinstance(text, DataType):
            return text
        match = _TYPE_RE.match(str(text))
        name = _ALIASES.get(" ".join(match.group(1).upper().split()), None) if match else None
        if match and name is None:
            name = " ".join(match.group(1).upper().split())
        if not match or name not in _SPARK_NAMES:
            known = ", ".join(sorted(set(_SPARK_NAMES) - {"NULL", "INTERVAL"}))
            raise ValidationError(f"Unknown data type {text!r}. Known types: {known}.")
        params = tuple(int(p) for p in (match.group(2) or "").replace(" ", "").split(",") if p)
        if name == "STRING" and params:
            params = ()  # VARCHAR(n) / CHAR(n): Spark keeps a plain string
        if name == "TIMESTAMP_LTZ" and not params:
            params = (6,)
        if name == "TIMESTAMP" and not params:
            params = (6,)
        if name == "DECIMAL" and not params:
            params = (10, 0)
        return cls(name, params, nullable=match.group(3) is None)

    # -- properties ------------------------------------------------------------------------
    @property
    def is_numeric(self) -> bool:
        """An integral type, DECIMAL, FLOAT or DOUBLE.

        >>> DataType.parse("DECIMAL(10, 2)").is_numeric, DataType.parse("STRING").is_numeric
        (True, False)
        """
        return self.name in NUMERIC_ORDER

    @property
    def is_integral(self) -> bool:
        """TINYINT, SMALLINT, INT or BIGINT.

        >>> [DataType.parse(t).is_integral for t in ("SMALLINT", "BIGINT", "DOUBLE")]
        [True, True, False]
        """
        return self.name in _INTEGRAL

    @property
    def is_timestamp(self) -> bool:
        """TIMESTAMP or TIMESTAMP_LTZ, time attribute or not (DATE is not).

        >>> orders.row_type.field("o_rowtime").type.is_timestamp
        True
        >>> DataType.parse("DATE").is_timestamp
        False
        """
        return self.name in ("TIMESTAMP", "TIMESTAMP_LTZ")

    @property
    def is_string(self) -> bool:
        """STRING (VARCHAR and CHAR parse to it).

        >>> DataType.parse("VARCHAR(10)").is_string
        True
        """
        return self.name == "STRING"

    @property
    def spark_ddl(self) -> str:
        """This type as a Spark DDL type string.

        >>> DataType.parse("BYTES").spark_ddl, DataType.parse("TIMESTAMP_LTZ(3)").spark_ddl
        ('BINARY', 'TIMESTAMP')
        """
        spark = _SPARK_NAMES[self.name]
        if self.name == "DECIMAL":
            return f"DECIMAL({self.params[0]},{self.params[1]})"
        return spark

    def with_nullable(self, nullable: bool) -> DataType:
        """This type, nullable or NOT NULL.

        >>> DataType.parse("INT").with_nullable(False)
        DataType('INT NOT NULL')
        """
        return attrs.evolve(self, nullable=nullable)

    def with_time_kind(self, kind: TimeKind) -> DataType:
        """This type marked as a time attribute (or unmarked with ``TimeKind.NONE``).

        >>> DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
        DataType('TIMESTAMP(3) *ROWTIME*')
        """
        return attrs.evolve(self, time_kind=kind)

    def materialized(self) -> DataType:
        """This type as an operator that materializes time attributes passes it on (a regular
        join): a rowtime keeps Flink's ``*ROWTIME*`` mark but is no event time downstream.

        >>> rowtime = orders.row_type.field("o_rowtime").type
        >>> rowtime.materialized(), rowtime.materialized().time_kind.name
        (DataType('TIMESTAMP(3) *ROWTIME*'), 'MATERIALIZED_ROWTIME')
        """
        if self.time_kind is not TimeKind.ROWTIME:
            return self
        return attrs.evolve(self, time_kind=TimeKind.MATERIALIZED_ROWTIME)

    def plain(self) -> DataType:
        """This type without a time-attribute mark (what a CAST to TIMESTAMP gives).

        >>> rowtime = orders.row_type.field("o_rowtime").type
        >>> rowtime, rowtime.plain()
        (DataType('TIMESTAMP(3) *ROWTIME*'), DataType('TIMESTAMP(3)'))
        """
        return attrs.evolve(self, time_kind=TimeKind.NONE)

    def __str__(self) -> str:
        text = self.name + (f"({', '.join(map(str, self.params))})" if self.params else "")
        if self.time_kind is not TimeKind.NONE:
            text += " " + self.time_kind.mark
        return text + ("" if self.nullable else " NOT NULL")

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"


BOOLEAN = DataType("BOOLEAN")
INT = DataType("INT")
BIGINT = DataType("BIGINT")
DOUBLE = DataType("DOUBLE")
STRING = DataType("STRING")
DATE = DataType("DATE")
TIMESTAMP_3 = DataType("TIMESTAMP", (3,))
TIMESTAMP_LTZ_3 = DataType("TIMESTAMP_LTZ", (3,))
INTERVAL = DataType("INTERVAL")
NULL = DataType("NULL")


def common_type(left: DataType, right: DataType) -> DataType | None:
    """The type both sides widen to (for comparison, CASE, COALESCE, UNION); None if none.
    A DECIMAL and an exact number: as many integer digits and fraction digits as either has
    (Calcite's least restrictive type; an INT is a DECIMAL(10, 0)). Arithmetic's own DECIMAL
    types: :func:`decimal_arithmetic`.

    >>> common_type(DataType.parse("DECIMAL(10, 2)"), DataType.parse("BIGINT NOT NULL"))
    DataType('DECIMAL(21, 2)')
    >>> common_type(DataType.parse("INT"), DataType.parse("DOUBLE"))
    DataType('DOUBLE')
    """
    if left.name == "NULL":
        return right.with_nullable(True)
    if right.name == "NULL":
        return left.with_nullable(True)
    nullable = left.nullable or right.nullable
    if left.plain().with_nullable(True) == right.plain().with_nullable(True):
        return left.plain().with_nullable(nullable)
    if left.is_numeric and right.is_numeric:
        if _exact_decimals(left, right):
            (p1, s1), (p2, s2) = decimal_params(left), decimal_params(right)
            digits = min(max(p1 - s1, p2 - s2), MAX_DECIMAL_PRECISION)
            scale = min(max(s1, s2), MAX_DECIMAL_PRECISION - digits)
            return DataType("DECIMAL", (digits + scale, scale), nullable)
        wider = max(left.name, right.name, key=NUMERIC_ORDER.index)
        return DataType.parse(wider).with_nullable(nullable)
    if left.is_timestamp and right.is_timestamp:
        return TIMESTAMP_3.with_nullable(nullable)
    if {left.name, right.name} <= {"DATE", "TIMESTAMP", "TIMESTAMP_LTZ"}:
        return TIMESTAMP_3.with_nullable(nullable)
    return None


def implicit_cast(source: DataType, target: DataType) -> bool:
    """Does Flink cast a query column of type ``source`` to a sink column of type ``target``
    (INSERT), rather than refuse the statement? Numbers widen (any number to DECIMAL or
    DOUBLE, not DOUBLE to FLOAT, no number to a narrower integer), a TIMESTAMP goes to DATE or
    TIMESTAMP_LTZ and back, a DECIMAL or timestamp to any precision; no other family changes
    (Flink 2.3, measured on every pair of its types).

    >>> implicit_cast(INT, BIGINT), implicit_cast(BIGINT, INT), implicit_cast(STRING, INT)
    (True, False, False)
    >>> implicit_cast(TIMESTAMP_3, DATE), implicit_cast(DATE, TIMESTAMP_3)
    (True, False)
    """
    s, t = source.name, target.name
    if s == t or s == "NULL":
        return True
    if source.is_numeric and target.is_numeric:
        if target.is_integral:
            return source.is_integral and NUMERIC_ORDER.index(s) <= NUMERIC_ORDER.index(t)
        return not (s == "DOUBLE" and t == "FLOAT")
    if s == "TIMESTAMP":
        return t in ("DATE", "TIMESTAMP_LTZ")
    return s == "TIMESTAMP_LTZ" and t == "TIMESTAMP"


MAX_DECIMAL_PRECISION = 38
# The digits of an integral type as a DECIMAL (Flink's and Calcite's: BIGINT is 19, not 20).
_INTEGRAL_DIGITS = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19}


def _exact_decimals(left: DataType, right: DataType) -> bool:
    names = {left.name, right.name}
    return "DECIMAL" in names and names <= _INTEGRAL | {"DECIMAL"}


def decimal_params(t: DataType) -> tuple[int, int]:
    """(precision, scale) of a DECIMAL, or of an integral type as the DECIMAL that holds it.

    >>> decimal_params(DataType.parse("DECIMAL(10, 2)")), decimal_params(INT)
    ((10, 2), (10, 0))
    """
    if t.name == "DECIMAL":
        return t.params[0], t.params[1]
    return _INTEGRAL_DIGITS[t.name], 0


def decimal_arithmetic(op: str, left: DataType, right: DataType) -> DataType | None:
    """Flink's type of ``left op right`` (``plus``, ``minus``, ``times``, ``divide``, ``mod``)
    when one side is a DECIMAL and the other exact (LogicalTypeMerging; Spark's rules are the
    same for DECIMAL operands, so the compiler casts integral operands to
    :func:`decimal_params`); None for other operands. Past 38 digits the precision is 38 and
    the scale gives way to the integer digits, down to 6 (or the scale, if less).

    >>> int_, d102 = DataType.parse("INT"), DataType.parse("DECIMAL(10, 2)")
    >>> decimal_arithmetic("times", int_, DataType.parse("DECIMAL(2, 1) NOT NULL"))
    DataType('DECIMAL(13, 1)')
    >>> decimal_arithmetic("divide", d102, int_), decimal_arithmetic("plus", d102, int_)
    (DataType('DECIMAL(21, 13)'), DataType('DECIMAL(13, 2)'))
    >>> decimal_arithmetic("times", d102, DataType.parse("DECIMAL(38, 10)"))
    DataType('DECIMAL(38, 6)')
    """
    if not _exact_decimals(left, right):
        return None
    (p1, s1), (p2, s2) = decimal_params(left), decimal_params(right)
    if op in ("plus", "minus"):
        scale = max(s1, s2)
        precision = max(p1 - s1, p2 - s2) + scale + 1
    elif op == "times":
        scale, precision = s1 + s2, p1 + p2 + 1
    elif op == "divide":
        scale = max(6, s1 + p2 + 1)
        precision = p1 - s1 + s2 + scale
    elif op == "mod":
        scale = max(s1, s2)
        precision = min(p1 - s1, p2 - s2) + scale
    else:
        raise ValueError(f"not an arithmetic operator: {op}")
    if precision > MAX_DECIMAL_PRECISION:
        scale = max(MAX_DECIMAL_PRECISION - (precision - scale), min(scale, 6))
        precision = MAX_DECIMAL_PRECISION
    return DataType("DECIMAL", (precision, scale), left.nullable or right.nullable)


def decimal_digits(value: decimal.Decimal) -> tuple[int, int]:
    """The (precision, scale) that holds ``value`` exactly: Flink's type of the literal.

    >>> decimal_digits(decimal.Decimal("0.5")), decimal_digits(decimal.Decimal("12.30"))
    ((1, 1), (4, 2))
    >>> decimal_digits(decimal.Decimal("1E+2"))  # 100: its zeros are digits too
    (3, 0)
    """
    _, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise ValidationError(f"{value} is no number a DECIMAL holds; use a finite value.")
    scale = -exponent if exponent < 0 else 0
    zeros = exponent if exponent > 0 else 0
    return max(len(digits) + zeros, scale, 1), scale


def type_of_value(value: object) -> DataType:
    """The Flink type of a Python literal."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOLEAN.with_nullable(False)
    if isinstance(value, int):
        return (INT if -(2**31) <= value < 2**31 else BIGINT).with_nullable(False)
    if isinstance(value, float):
        return DOUBLE.with_nullable(False)
    if isinstance(value, decimal.Decimal):
        return DataType("DECIMAL", decimal_digits(value), False)
    if isinstance(value, str):
        return STRING.with_nullable(False)
    if isinstance(value, bytes):
        return DataType("BYTES", (), False)
    if isinstance(value, dt.datetime):
        return TIMESTAMP_3.with_nullable(False)
    if isinstance(value, dt.date):
        return DATE.with_nullable(False)
    if isinstance(value, dt.timedelta):
        return INTERVAL.with_nullable(False)
    raise ValidationError(
        f"Cannot use {value!r} of Python type {type(value).__name__} as a literal; "
        "use bool, int, float, Decimal, str, bytes, date, datetime or timedelta."
    )


def from_spark(spark_type: object) -> DataType:
    """The Flink type of a pyspark ``DataType`` (for tables made from Spark DataFrames)."""
    from pyspark.sql import types as T

    table: list[tuple[type, str]] = [
        (T.BooleanType, "BOOLEAN"),
        (T.ByteType, "TINYINT"),
        (T.ShortType, "SMALLINT"),
        (T.IntegerType, "INT"),
        (T.LongType, "BIGINT"),
        (T.FloatType, "FLOAT"),
        (T.DoubleType, "DOUBLE"),
        (T.StringType, "STRING"),
        (T.BinaryType, "BYTES"),
        (T.DateType, "DATE"),
        (T.TimestampNTZType, "TIMESTAMP(6)"),
        (T.TimestampType, "TIMESTAMP(6)"),
        (T.NullType, "NULL"),
    ]
    if isinstance(spark_type, T.DecimalType):
        return DataType("DECIMAL", (spark_type.precision, spark_type.scale))
    for cls, name in table:
        if isinstance(spark_type, cls):
            return DataType.parse(name)
    raise ValidationError(f"Spark type {spark_type} has no Table API counterpart yet.")


def to_spark(data_type: DataType) -> Any:
    """The pyspark ``DataType`` of a Flink type (the inverse of :func:`from_spark`)."""
    from pyspark.sql import types as T

    simple = {
        "BOOLEAN": T.BooleanType,
        "TINYINT": T.ByteType,
        "SMALLINT": T.ShortType,
        "INT": T.IntegerType,
        "BIGINT": T.LongType,
        "FLOAT": T.FloatType,
        "DOUBLE": T.DoubleType,
        "STRING": T.StringType,
        "BYTES": T.BinaryType,
        "DATE": T.DateType,
        "TIMESTAMP": T.TimestampType,
        "TIMESTAMP_LTZ": T.TimestampType,
        "NULL": T.NullType,
    }
    if data_type.name == "DECIMAL":
        return T.DecimalType(*data_type.params)
    if data_type.name == "INTERVAL":
        return T.DayTimeIntervalType(T.DayTimeIntervalType.DAY, T.DayTimeIntervalType.SECOND)
    return simple[data_type.name]()


def to_spark_struct(row: RowType) -> Any:
    """The pyspark ``StructType`` of a row type, built locally (no server round trip)."""
    from pyspark.sql import types as T

    return T.StructType(
        [T.StructField(f.name, to_spark(f.type), f.type.nullable) for f in row.fields]
    )


@attrs.frozen
class Field:
    """A named, typed column of a row type."""

    name: str
    type: DataType

    def __str__(self) -> str:
        return f"{self.name} {self.type}"


@attrs.frozen
class RowType:
    """The ordered, uniquely named columns a plan node produces.

    Example::

        >>> RowType.of(("a", INT), ("b", STRING)).names
        ('a', 'b')
    """

    fields: tuple[Field, ...]

    @classmethod
    def of(cls, *pairs: tuple[str, DataType]) -> RowType:
        return cls(tuple(Field(n, t) for n, t in pairs))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def __contains__(self, name: object) -> bool:
        return any(f.name == name for f in self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def field(self, name: str, where: str = "") -> Field:
        """The field of that name; an error listing the columns that exist otherwise."""
        for f in self.fields:
            if f.name == name:
                return f
        from tableapi.errors import column_not_found

        raise column_not_found(name, self.names, where)

    def index(self, name: str) -> int:
        return self.names.index(name)

    @property
    def spark_ddl(self) -> str:
        """``a INT, b STRING``: the Spark DDL of these columns (time marks dropped)."""
        return ", ".join(f"`{f.name}` {f.type.spark_ddl}" for f in self.fields)

    def __str__(self) -> str:
        return "(" + ", ".join(str(f) for f in self.fields) + ")"

    def __repr__(self) -> str:
        return "RowType(" + ", ".join(str(f) for f in self.fields) + ")"
