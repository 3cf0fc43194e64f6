"""Expression trees: what ``col``, ``lit``, ``call`` and their operators build.

Expressions are immutable. They are typed against a :class:`~tableapi.types.RowType`
when a table operation receives them, so a bad column or type fails at once.

Example::

    >>> e = (col("amount") * 2 + 1).alias("x")
    >>> str(e)
    '((amount * 2) + 1) AS x'
    >>> str(col("o_rowtime") - lit(5).seconds)
    "(o_rowtime - INTERVAL '5' SECOND)"
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from tableapi import functions
from tableapi.errors import ValidationError
from tableapi.types import BOOLEAN, DataType, RowType, type_of_value


class Expression:
    """Base of all expression nodes; carries the fluent operators (PyFlink names).

    >>> col("amount") * 2 + 1
    call('plus', call('times', col('amount'), lit(2)), lit(1))
    >>> str((col("amount") > 10) & col("currency").is_not_null)
    '((amount > 10) AND (currency IS NOT NULL))'
    """

    # -- tree protocol ---------------------------------------------------------------------
    def children(self) -> tuple[Expression, ...]:
        """The operands, in order (none for a column or a literal).

        >>> (col("amount") + 1).children()
        (col('amount'), lit(1))
        """
        return ()

    def with_children(self, children: tuple[Expression, ...]) -> Expression:
        """This node over other operands (what :meth:`transform` rebuilds with).

        >>> (col("amount") + 1).with_children((col("price"), lit(2)))
        call('plus', col('price'), lit(2))
        """
        return self

    def type_in(self, row: RowType) -> DataType:
        """The type of this expression over input columns ``row``; raises on bad input.

        >>> (col("amount") * 2).type_in(orders.row_type)
        DataType('INT')
        """
        raise NotImplementedError

    def walk(self) -> Iterator[Expression]:
        """This node and all below it, parents first.

        >>> list((col("amount") + 1).walk())
        [call('plus', col('amount'), lit(1)), col('amount'), lit(1)]
        """
        yield self
        for child in self.children():
            yield from child.walk()

    def transform(self, fn: Callable[[Expression], Expression | None]) -> Expression:
        """Rebuild bottom-up; ``fn`` returns a replacement node or None to keep it.

        >>> e = col("amount") * col("rate")
        >>> e.transform(lambda x: lit(1.0) if x.same_as(col("rate")) else None)
        call('times', col('amount'), lit(1.0))
        """
        rebuilt = self.with_children(tuple(c.transform(fn) for c in self.children()))
        replaced = fn(rebuilt)
        return rebuilt if replaced is None else replaced

    def column_names(self) -> set[str]:
        """The names of the columns this expression reads.

        >>> sorted((col("amount") * col("rate") + 1).column_names())
        ['amount', 'rate']
        """
        return {e.name for e in self.walk() if isinstance(e, Column)}

    @property
    def output_name(self) -> str | None:
        """The column name a projection of this expression gets, if it implies one.

        >>> col("price").output_name, (col("price") * 2).output_name
        ('price', None)
        >>> (col("price") * 2).alias("p2").output_name
        'p2'
        """
        return None

    def key(self) -> tuple[Any, ...]:
        """A structural identity (``==`` builds an expression, so it cannot be equality).

        >>> (col("amount") + 1).key()
        ('Call', 'plus', ('Column', 'amount'), ('Literal', '1', 'INT NOT NULL'))
        """
        return (type(self).__name__, *(c.key() for c in self.children()))

    def same_as(self, other: Expression) -> bool:
        """Whether both are the same expression tree (compares :meth:`key`).

        >>> (col("amount") + 1).same_as(col("amount") + 1)
        True
        >>> (col("amount") + 1).same_as(col("amount") + 2)
        False
        """
        return self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __bool__(self) -> bool:
        raise ValidationError(
            f"An expression has no truth value: {self}. Combine conditions with & | ~ "
            "instead of and/or/not, and compare columns inside where()/join() predicates."
        )

    # -- operators -------------------------------------------------------------------------
    def __add__(self, o: object) -> Expression:
        return Call("plus", (self, _expr(o)))

    def __radd__(self, o: object) -> Expression:
        return Call("plus", (_expr(o), self))

    def __sub__(self, o: object) -> Expression:
        return Call("minus", (self, _expr(o)))

    def __rsub__(self, o: object) -> Expression:
        return Call("minus", (_expr(o), self))

    def __mul__(self, o: object) -> Expression:
        return Call("times", (self, _expr(o)))

    def __rmul__(self, o: object) -> Expression:
        return Call("times", (_expr(o), self))

    def __truediv__(self, o: object) -> Expression:
        return Call("divide", (self, _expr(o)))

    def __rtruediv__(self, o: object) -> Expression:
        return Call("divide", (_expr(o), self))

    def __mod__(self, o: object) -> Expression:
        return Call("mod", (self, _expr(o)))

    def __neg__(self) -> Expression:
        return Call("negate", (self,))

    def __eq__(self, o: object) -> Expression:  # type: ignore[override]
        return Call("equals", (self, _expr(o)))

    def __ne__(self, o: object) -> Expression:  # type: ignore[override]
        return Call("not_equals", (self, _expr(o)))

    def __lt__(self, o: object) -> Expression:
        return Call("less_than", (self, _expr(o)))

    def __le__(self, o: object) -> Expression:
        return Call("less_than_or_equal", (self, _expr(o)))

    def __gt__(self, o: object) -> Expression:
        return Call("greater_than", (self, _expr(o)))

    def __ge__(self, o: object) -> Expression:
        return Call("greater_than_or_equal", (self, _expr(o)))

    def __and__(self, o: object) -> Expression:
        return Call("and", (self, _expr(o)))

    def __rand__(self, o: object) -> Expression:
        return Call("and", (_expr(o), self))

    def __or__(self, o: object) -> Expression:
        return Call("or", (self, _expr(o)))

    def __ror__(self, o: object) -> Expression:
        return Call("or", (_expr(o), self))

    def __invert__(self) -> Expression:
        return Call("not", (self,))

    # -- named methods (PyFlink's Expression API) ---------------------------------------------
    def alias(self, name: str) -> Expression:
        """Name the result: ``(col("a") + 1).alias("b")``.

        >>> col("price").alias("cost")
        col('price').alias('cost')
        >>> products.select((col("price") * 2).alias("double_price")).column_names
        ('double_price',)
        """
        return Alias(self, name)

    def cast(self, data_type: str | DataType) -> Expression:
        """``col("ts").cast("TIMESTAMP(3)")``.

        >>> col("amount").cast("BIGINT")
        col('amount').cast('BIGINT')
        >>> orders.select(col("o_rowtime").cast("TIMESTAMP(3)").alias("ts")).row_type
        RowType(ts TIMESTAMP(3))
        """
        return Cast(self, DataType.parse(data_type))

    def between(self, lower: object, upper: object) -> Expression:
        """Inclusive range test: ``col("t").between(col("s") - lit(4).hours, col("s"))``.

        >>> print(orders.where(col("amount").between(1, 10)).explain().splitlines()[1])
        LogicalFilter(condition=[(amount BETWEEN 1 AND 10)])
        """
        return Call("between", (self, _expr(lower), _expr(upper)))

    def not_between(self, lower: object, upper: object) -> Expression:
        """Outside the inclusive range (the negation of :meth:`between`).

        >>> str(col("amount").not_between(1, 10))
        '(amount NOT BETWEEN 1 AND 10)'
        """
        return Call("not_between", (self, _expr(lower), _expr(upper)))

    def in_(self, *values: object) -> Expression:
        """Membership in literal values, or in a one-column table: ``col("id").in_(t)``
        (a semi join; ``~col("id").in_(t)`` is NOT IN, Flink's null-aware anti join).

        >>> str(col("currency").in_("EUR", "USD"))
        "(currency IN ('EUR', 'USD'))"
        >>> print(orders.where(col("product_id").in_(products.select(col("id")))).explain()
        ...       .splitlines()[1])
        LogicalFilter(condition=[(product_id IN <table id>)])
        """
        if len(values) == 1 and hasattr(values[0], "_plan"):
            return InTable(self, values[0]._plan)
        if not values:
            raise ValidationError("in_() needs at least one value or a table.")
        return Call("in", (self, *(_expr(v) for v in values)))

    def like(self, pattern: object) -> Expression:
        """SQL ``LIKE``: ``%`` matches any characters, ``_`` one.

        >>> print(products.where(col("name").like("p%")).explain().splitlines()[1])
        LogicalFilter(condition=[(name LIKE 'p%')])
        """
        return Call("like", (self, _expr(pattern)))

    def is_not_distinct_from(self, o: object) -> Expression:
        """Equality that treats two NULLs as equal (join keys that may be NULL).

        >>> str(col("currency").is_not_distinct_from(col("r_currency")))
        '(currency IS NOT DISTINCT FROM r_currency)'
        """
        return Call("is_not_distinct_from", (self, _expr(o)))

    def is_distinct_from(self, o: object) -> Expression:
        """Inequality that treats two NULLs as equal (NULL and a value are distinct).

        >>> str(col("currency").is_distinct_from("EUR"))
        "(currency IS DISTINCT FROM 'EUR')"
        """
        return Call("is_distinct_from", (self, _expr(o)))

    def substring(self, begin: object, length: object | None = None) -> Expression:
        """``length`` characters (or all the rest) from position ``begin``, counted from 1.

        >>> str(col("name").substring(1, 3))
        'SUBSTRING(name, 1, 3)'
        """
        args = (self, _expr(begin)) + (() if length is None else (_expr(length),))
        return Call("substring", args)

    def trim(self) -> Expression:
        """The string without leading and trailing spaces.

        >>> products.select(col("name").trim().alias("name")).row_type
        RowType(name STRING)
        """
        return Call("trim", (self,))

    def round(self, places: int = 0) -> Expression:
        """The number rounded to ``places`` decimal places.

        >>> products.select(col("price").round(1).alias("price")).row_type
        RowType(price DOUBLE)
        """
        return Call("round", (self, _expr(places)))

    def power(self, exponent: object) -> Expression:
        """This number raised to ``exponent``.

        >>> str(col("price").power(2))
        'POWER(price, 2)'
        """
        return Call("power", (self, _expr(exponent)))

    def date_format(self, pattern: str) -> Expression:
        """The timestamp as a string in a Java date pattern such as ``yyyy-MM-dd HH:mm``.

        >>> orders.select(col("o_rowtime").date_format("yyyy-MM-dd").alias("day")).row_type
        RowType(day STRING)
        """
        return Call("date_format", (self, _expr(pattern)))

    @property
    def is_null(self) -> Expression:
        """``IS NULL``.

        >>> str(col("currency").is_null)
        '(currency IS NULL)'
        """
        return Call("is_null", (self,))

    @property
    def is_not_null(self) -> Expression:
        """``IS NOT NULL``.

        >>> print(products.where(col("name").is_not_null).explain().splitlines()[1])
        LogicalFilter(condition=[(name IS NOT NULL)])
        """
        return Call("is_not_null", (self,))

    @property
    def upper_case(self) -> Expression:
        """The string in upper case.

        >>> str(col("name").upper_case)
        'UPPER(name)'
        """
        return Call("upper", (self,))

    @property
    def lower_case(self) -> Expression:
        """The string in lower case.

        >>> products.select(col("name").lower_case.alias("name")).row_type
        RowType(name STRING)
        """
        return Call("lower", (self,))

    @property
    def char_length(self) -> Expression:
        """The number of characters of the string.

        >>> products.select(col("name").char_length.alias("n")).row_type
        RowType(n INT)
        """
        return Call("char_length", (self,))

    @property
    def abs(self) -> Expression:
        """The absolute value.

        >>> orders.select(col("amount").abs.alias("amount")).row_type
        RowType(amount INT)
        """
        return Call("abs", (self,))

    @property
    def floor(self) -> Expression:
        """The number rounded down.

        >>> str(col("price").floor)
        'FLOOR(price)'
        """
        return Call("floor", (self,))

    @property
    def ceil(self) -> Expression:
        """The number rounded up.

        >>> products.select(col("price").ceil.alias("price")).row_type
        RowType(price DOUBLE)
        """
        return Call("ceil", (self,))

    @property
    def asc(self) -> Expression:
        """Ascending order, for ``order_by``.

        >>> print(products.order_by(col("price").asc).explain().splitlines()[1])
        LogicalSort(sort=[price ASC])
        """
        return Call("asc", (self,))

    @property
    def desc(self) -> Expression:
        """Descending order, for ``order_by``.

        >>> print(products.order_by(col("price").desc).explain().splitlines()[1])
        LogicalSort(sort=[price DESC])
        """
        return Call("desc", (self,))

    # aggregates
    @property
    def sum(self) -> Expression:
        """Aggregate: the sum, in the column's type as in Flink (an INT column sums to an INT;
        a DECIMAL(p, s) to a DECIMAL(38, s)); NULL when there is no non-NULL value.

        >>> orders.group_by(col("currency")).select(
        ...     col("currency"), col("amount").sum.alias("total")).row_type
        RowType(currency STRING, total INT)
        """
        return Call("sum", (self,))

    @property
    def count(self) -> Expression:
        """Aggregate: the number of non-NULL values.

        >>> orders.group_by(col("currency")).select(col("order_id").count.alias("n")).row_type
        RowType(n BIGINT NOT NULL)
        """
        return Call("count", (self,))

    @property
    def avg(self) -> Expression:
        """Aggregate: the mean, in the column's type as in Flink (an INT column's mean is an
        INT, truncated toward zero; a DECIMAL(p, s)'s a DECIMAL(38, max(6, s))).

        >>> orders.group_by(col("currency")).select(col("amount").avg.alias("mean")).row_type
        RowType(mean INT)
        """
        return Call("avg", (self,))

    @property
    def min(self) -> Expression:
        """Aggregate: the least value.

        >>> products.select(col("price").min.alias("cheapest")).row_type
        RowType(cheapest DOUBLE)
        """
        return Call("min", (self,))

    @property
    def max(self) -> Expression:
        """Aggregate: the greatest value.

        >>> str(col("price").max)
        'MAX(price)'
        """
        return Call("max", (self,))

    @property
    def distinct(self) -> Expression:
        """The DISTINCT form of an aggregate (``COUNT(DISTINCT x)``): each distinct non-NULL
        value counted once.

        >>> str(col("user").count.distinct), str(col("amount").sum.distinct)
        ('COUNT(DISTINCT user)', 'SUM(DISTINCT amount)')
        """
        if isinstance(self, Call) and self.name in DISTINCT_AGGREGATES and self.args:
            return Call(f"{self.name}_distinct", self.args)
        raise ValidationError(
            f".distinct follows an aggregate of a column, as in col('x').count.distinct "
            f"({', '.join(DISTINCT_AGGREGATES)}); got {self}."
        )

    # interval literals: lit(4).hours
    def _interval(self, unit: str) -> Expression:
        if not (
            isinstance(self, Literal)
            and isinstance(self.value, int | float)
            and not isinstance(self.value, bool)
        ):
            raise ValidationError(
                f".{unit} makes an interval from a number literal, as in lit(4).{unit}; got {self}."
            )
        return Literal(dt.timedelta(**{unit: self.value}), DataType("INTERVAL", (), False))

    @property
    def days(self) -> Expression:
        """An interval of this many days (``lit(1).day`` reads better for one).

        >>> str(lit(2).days), str(lit(1).day)
        ("INTERVAL '2' DAY", "INTERVAL '1' DAY")
        """
        return self._interval("days")

    @property
    def hours(self) -> Expression:
        """An interval of this many hours (also ``lit(1).hour``).

        >>> str(col("o_rowtime") - lit(4).hours)
        "(o_rowtime - INTERVAL '4' HOUR)"
        """
        return self._interval("hours")

    @property
    def minutes(self) -> Expression:
        """An interval of this many minutes (also ``lit(1).minute``).

        >>> str(lit(10).minutes)
        "INTERVAL '10' MINUTE"
        """
        return self._interval("minutes")

    @property
    def seconds(self) -> Expression:
        """An interval of this many seconds (also ``lit(1).second``).

        >>> lit(5).seconds
        lit(datetime.timedelta(seconds=5))
        """
        return self._interval("seconds")

    @property
    def millis(self) -> Expression:
        """An interval of this many milliseconds (also ``lit(1).milli``).

        >>> str(lit(500).millis)
        "INTERVAL '0.5' SECOND"
        """
        return self._interval("milliseconds")

    # group window properties: col("w").start where w is a group window's alias
    @property
    def start(self) -> Expression:
        """The start of the group window this alias names (``TIMESTAMP(3)``), in the
        ``select`` of ``t.window(w).group_by(col("w"), ...)`` (``tableapi.window``).

        >>> str(col("w").start)
        'start(w)'
        """
        return WindowProperty("start", _alias_of(self, "start"))

    @property
    def end(self) -> Expression:
        """The end of the group window this alias names (exclusive).

        >>> str(col("w").end)
        'end(w)'
        """
        return WindowProperty("end", _alias_of(self, "end"))

    @property
    def rowtime(self) -> Expression:
        """The group window's rowtime (its end - 1 ms), a time attribute for a later window.

        >>> str(col("w").rowtime)
        'rowtime(w)'
        """
        return WindowProperty("rowtime", _alias_of(self, "rowtime"))

    @property
    def proctime(self) -> Expression:
        """The processing-time group window's time attribute (its end - 1 ms).

        >>> str(col("w").proctime)
        'proctime(w)'
        """
        return WindowProperty("proctime", _alias_of(self, "proctime"))

    # singular spellings as in PyFlink (lit(1).hour)
    day = days
    hour = hours
    minute = minutes
    second = seconds
    milli = millis


def _call_repr(name: str, args: tuple[Expression, ...]) -> str:
    """``call('name', ...)``: how a call of a function by name is written (Call, UnresolvedCall)."""
    return f"call({', '.join(map(repr, (name, *args)))})"


@attrs.frozen(eq=False, repr=False)
class Column(Expression):
    """A reference to an input column by name."""

    name: str

    def type_in(self, row: RowType) -> DataType:
        return row.field(self.name).type

    @property
    def output_name(self) -> str | None:
        return self.name

    def key(self) -> tuple[Any, ...]:
        return ("Column", self.name)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"col({self.name!r})"


@attrs.frozen(eq=False, repr=False)
class Literal(Expression):
    """A constant; intervals are ``datetime.timedelta`` values of type INTERVAL."""

    value: Any
    type: DataType

    def type_in(self, row: RowType) -> DataType:
        return self.type

    def key(self) -> tuple[Any, ...]:
        return ("Literal", repr(self.value), str(self.type))

    def __str__(self) -> str:
        if isinstance(self.value, dt.timedelta):
            return _interval_sql(self.value)
        if self.value is None:
            return "NULL"
        if isinstance(self.value, str):
            return "'" + self.value.replace("'", "''") + "'"
        if isinstance(self.value, bool):
            return str(self.value).upper()
        return str(self.value)

    def __repr__(self) -> str:
        return f"lit({self.value!r})"


@attrs.frozen(eq=False, repr=False)
class Call(Expression):
    """A built-in function or operator applied to arguments."""

    name: str
    args: tuple[Expression, ...]

    def __attrs_post_init__(self) -> None:
        functions.lookup(self.name)  # unknown names fail at once

    @property
    def function(self) -> functions.FunctionDef:
        return functions.lookup(self.name)

    def children(self) -> tuple[Expression, ...]:
        return self.args

    def with_children(self, children: tuple[Expression, ...]) -> Expression:
        return Call(self.name, children)

    def type_in(self, row: RowType) -> DataType:
        fn = self.function
        if fn.aggregate:
            nested = [e for a in self.args for e in a.walk() if is_aggregate(e)]
            if nested:
                raise ValidationError(f"Aggregate {self} contains another aggregate {nested[0]}.")
        return fn.result_type([a.type_in(row) for a in self.args])

    @property
    def output_name(self) -> str | None:
        if self.name in ("asc", "desc"):
            return self.args[0].output_name
        return None

    def key(self) -> tuple[Any, ...]:
        return ("Call", self.function.name, *(a.key() for a in self.args))

    def __str__(self) -> str:
        fn = self.function
        a = self.args
        if fn.infix and len(a) == 2:
            return f"({a[0]} {fn.infix} {a[1]})"
        if fn.name in ("between", "not_between"):
            word = "BETWEEN" if fn.name == "between" else "NOT BETWEEN"
            return f"({a[0]} {word} {a[1]} AND {a[2]})"
        if fn.name == "in":
            return f"({a[0]} IN ({', '.join(map(str, a[1:]))}))"
        if fn.name in ("is_null", "is_not_null"):
            return f"({a[0]} {'IS NULL' if fn.name == 'is_null' else 'IS NOT NULL'})"
        if fn.name in ("asc", "desc"):
            return f"{a[0]} {fn.name.upper()}"
        if fn.name == "negate":
            return f"-({a[0]})"
        if fn.name == "not":
            return f"NOT({a[0]})"
        if fn.name == "if":
            return f"IF({a[0]}, {a[1]}, {a[2]})"
        if fn.name.endswith("_distinct"):
            return f"{fn.name[: -len('_distinct')].upper()}(DISTINCT {', '.join(map(str, a))})"
        return f"{fn.name.upper()}({', '.join(map(str, a))})"

    def __repr__(self) -> str:
        return _call_repr(self.name, self.args)


@attrs.frozen(eq=False, repr=False)
class Cast(Expression):
    """``CAST(expr AS type)``; a cast drops a time attribute's mark, as in Flink."""

    expr: Expression
    to: DataType

    def children(self) -> tuple[Expression, ...]:
        return (self.expr,)

    def with_children(self, children: tuple[Expression, ...]) -> Expression:
        return Cast(children[0], self.to)

    def type_in(self, row: RowType) -> DataType:
        source = self.expr.type_in(row)
        return self.to.with_nullable(source.nullable and self.to.nullable)

    @property
    def output_name(self) -> str | None:
        return None

    def key(self) -> tuple[Any, ...]:
        return ("Cast", str(self.to), self.expr.key())

    def __str__(self) -> str:
        return f"CAST({self.expr} AS {self.to})"

    def __repr__(self) -> str:
        return f"{self.expr!r}.cast({str(self.to)!r})"


@attrs.frozen(eq=False, repr=False)
class Alias(Expression):
    """``expr AS name``."""

    expr: Expression
    name: str

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValidationError(f"alias() needs a non-empty column name, got {self.name!r}.")

    def children(self) -> tuple[Expression, ...]:
        return (self.expr,)

    def with_children(self, children: tuple[Expression, ...]) -> Expression:
        return Alias(children[0], self.name)

    def type_in(self, row: RowType) -> DataType:
        return self.expr.type_in(row)

    @property
    def output_name(self) -> str | None:
        return self.name

    def key(self) -> tuple[Any, ...]:
        return ("Alias", self.name, self.expr.key())

    def __str__(self) -> str:
        return f"{self.expr} AS {self.name}"

    def __repr__(self) -> str:
        return f"{self.expr!r}.alias({self.name!r})"


@attrs.frozen(eq=False, repr=False)
class UserFunction:
    """A Python scalar function usable in expressions (a Spark Python UDF on the server).

    Example::

        >>> plus_one = udf(lambda x: x + 1, result_type="BIGINT", name="plus_one")
    """

    func: Callable[..., Any]
    result_type: DataType
    name: str
    deterministic: bool = True

    def __call__(self, *args: object) -> Expression:
        return UserCall(self, tuple(_expr(a) for a in args))


def udf(
    func: Callable[..., Any],
    result_type: str | DataType,
    name: str | None = None,
    deterministic: bool = True,
) -> UserFunction:
    """Wrap a Python function as a scalar function: ``udf(f, result_type="INT")``.

    >>> plus_one = udf(lambda x: x + 1, result_type="BIGINT", name="plus_one")
    >>> products.select(plus_one(col("id")).alias("next_id")).row_type
    RowType(next_id BIGINT)
    """
    return UserFunction(func, DataType.parse(result_type), name or func.__name__, deterministic)


@attrs.frozen(eq=False, repr=False)
class UserCall(Expression):
    """A call of a :class:`UserFunction`."""

    function: UserFunction
    args: tuple[Expression, ...]

    def children(self) -> tuple[Expression, ...]:
        return self.args

    def with_children(self, children: tuple[Expression, ...]) -> Expression:
        return UserCall(self.function, children)

    def type_in(self, row: RowType) -> DataType:
        for a in self.args:
            a.type_in(row)
        return self.function.result_type

    def key(self) -> tuple[Any, ...]:
        return (
            "UserCall",
            self.function.name,
            id(self.function.func),
            *(a.key() for a in self.args),
        )

    def __str__(self) -> str:
        return f"{self.function.name}({', '.join(map(str, self.args))})"


def _alias_of(e: Expression, prop: str) -> str:
    if not isinstance(e, Column):
        raise ValidationError(
            f".{prop} follows a group window's alias, as in col('w').{prop}; got {e}."
        )
    return e.name


@attrs.frozen(eq=False, repr=False)
class WindowProperty(Expression):
    """``col("w").start`` (``end``, ``rowtime``, ``proctime``): a property of the group window
    aliased ``w``, read in the ``select`` of a windowed, grouped table.

    >>> col("w").end.key()
    ('WindowProperty', 'end', 'w')
    """

    name: str  # start, end, rowtime, proctime
    window: str  # the window's alias

    def type_in(self, row: RowType) -> DataType:
        raise ValidationError(
            "Window properties can only be used on windowed tables: "
            f"{self} is a property of the group window {self.window!r}; it is read in the "
            f"select() of t.window(w).group_by(col({self.window!r}), ...), where w is "
            f"Tumble/Slide/Session...alias({self.window!r})."
        )

    def key(self) -> tuple[Any, ...]:
        return ("WindowProperty", self.name, self.window)

    def __str__(self) -> str:
        return f"{self.name}({self.window})"

    def __repr__(self) -> str:
        return f"col({self.window!r}).{self.name}"


@attrs.frozen(eq=False, repr=False)
class UnresolvedCall(Expression):
    """``call(name, ...)`` of a name that is not built in: resolved against the catalog."""

    name: str
    args: tuple[Expression, ...]

    def children(self) -> tuple[Expression, ...]:
        return self.args

    def with_children(self, children: tuple[Expression, ...]) -> Expression:
        return UnresolvedCall(self.name, children)

    def type_in(self, row: RowType) -> DataType:
        raise functions.unknown_function(self.name)

    def key(self) -> tuple[Any, ...]:
        return ("UnresolvedCall", self.name, *(a.key() for a in self.args))

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.args))})"

    def __repr__(self) -> str:
        return _call_repr(self.name, self.args)


@attrs.frozen(eq=False, repr=False)
class RowConstructor(Expression):
    """``row(a, b)``: several values compared as one, on the left of ``in_(table)``
    (``(a, b) IN (SELECT x, y FROM t)``)."""

    fields: tuple[Expression, ...]

    def children(self) -> tuple[Expression, ...]:
        return self.fields

    def with_children(self, children: tuple[Expression, ...]) -> Expression:
        return RowConstructor(children)

    def type_in(self, row: RowType) -> DataType:
        raise ValidationError(
            f"{self} is supported only on the left of in_(table), e.g. "
            "where(row(col('a'), col('b')).in_(other.select(col('x'), col('y'))))."
        )

    def __str__(self) -> str:
        return f"ROW({', '.join(map(str, self.fields))})"

    def __repr__(self) -> str:
        return f"row({', '.join(map(repr, self.fields))})"


@attrs.frozen(eq=False, repr=False)
class InTable(Expression):
    """``expr IN (SELECT c FROM table)`` (or ``row(a, b) IN (SELECT x, y ...)``): becomes a
    semi join when the plan is built; under NOT, Flink's null-aware anti join."""

    expr: Expression
    query: Any  # a logical plan node with one column per compared value

    @property
    def values(self) -> tuple[Expression, ...]:
        """The compared values, one per column of the table."""
        return self.expr.fields if isinstance(self.expr, RowConstructor) else (self.expr,)

    def children(self) -> tuple[Expression, ...]:
        return (self.expr,)

    def with_children(self, children: tuple[Expression, ...]) -> Expression:
        return InTable(children[0], self.query)

    def type_in(self, row: RowType) -> DataType:
        fields = self.query.row_type.fields
        values = self.values
        names = ", ".join(f.name for f in fields)
        if len(values) == 1 and len(fields) != 1:
            raise ValidationError(
                f"in_(table) needs a table with exactly one column; it has [{names}]. "
                "select() the column first (or compare several with row(...).in_(table))."
            )
        if len(fields) != len(values):
            raise ValidationError(
                f"{self.expr}.in_(table) compares {len(values)} values, but the table has "
                f"{len(fields)} column(s) [{names}]: select() one column per value."
            )
        for value, field in zip(values, fields, strict=True):
            functions.lookup("in").result_type([value.type_in(row), field.type])  # comparable
        return BOOLEAN

    def key(self) -> tuple[Any, ...]:
        return ("InTable", id(self.query), self.expr.key())

    def __str__(self) -> str:
        return f"({self.expr} IN <table {', '.join(self.query.row_type.names)}>)"


# -- constructors -------------------------------------------------------------------------------
def col(name: str) -> Expression:
    """A column reference: ``col("amount")``.

    >>> col("amount")
    col('amount')
    >>> orders.select(col("amount")).row_type
    RowType(amount INT)
    """
    if not isinstance(name, str) or not name:
        raise ValidationError(f"col() needs a column name, got {name!r}.")
    return Column(name)


def lit(value: object, data_type: str | DataType | None = None) -> Expression:
    """A literal: ``lit(4)``, ``lit("Euro")``, ``lit(4).hours``, ``lit(None, "INT")``.

    >>> lit("Euro")
    lit('Euro')
    >>> products.select(lit(1).alias("one"), lit(None, "STRING").alias("none")).row_type
    RowType(one INT NOT NULL, none STRING)
    """
    if isinstance(value, Expression):
        return value
    t = DataType.parse(data_type) if data_type is not None else type_of_value(value)
    return Literal(value, t)


def call(name: str | UserFunction, *args: object) -> Expression:
    """Call a built-in or registered function by name: ``call("UPPER", col("name"))``.

    >>> call("UPPER", col("name"))
    call('upper', col('name'))
    >>> call("my_udf", col("name"))  # resolved when a table operation receives it
    call('my_udf', col('name'))
    """
    if isinstance(name, UserFunction):
        return name(*args)
    exprs = tuple(_expr(a) for a in args)
    if functions.is_function(name):
        return Call(functions.lookup(name).name, exprs)
    return UnresolvedCall(name, exprs)


def if_then_else(condition: object, if_true: object, if_false: object) -> Expression:
    """``IF(condition, if_true, if_false)``.

    >>> band = if_then_else(col("price") > 5, "dear", "cheap")
    >>> str(band)
    "IF((price > 5), 'dear', 'cheap')"
    >>> products.select(band.alias("band")).row_type
    RowType(band STRING NOT NULL)
    """
    return Call("if", (_expr(condition), _expr(if_true), _expr(if_false)))


def coalesce(*args: object) -> Expression:
    """The first argument that is not NULL.

    >>> orders.select(coalesce(col("currency"), "EUR").alias("currency")).row_type
    RowType(currency STRING NOT NULL)
    """
    return Call("coalesce", tuple(_expr(a) for a in args))


def row(*fields: object) -> Expression:
    """Several values as one row, for multi-column IN: ``row(col("a"), col("b")).in_(t)``.

    >>> pair = row(col("product_id"), col("currency"))
    >>> pair
    row(col('product_id'), col('currency'))
    >>> print(orders.where(pair.in_(products.select(col("id"), col("name")))).explain()
    ...       .splitlines()[1])
    LogicalFilter(condition=[(ROW(product_id, currency) IN <table id, name>)])
    """
    if len(fields) < 2:
        raise ValidationError("row() needs at least two values; for one, use col(...).in_(t).")
    return RowConstructor(tuple(_expr(f) for f in fields))


def concat(*args: object) -> Expression:
    """The strings joined end to end.

    >>> str(concat(col("name"), " @ ", col("price").cast("STRING")))
    "CONCAT(name, ' @ ', CAST(price AS STRING))"
    """
    return Call("concat", tuple(_expr(a) for a in args))


def and_(*conditions: object) -> Expression:
    """All of the conditions (True when none).

    >>> str(and_(col("amount") > 10, col("currency") == "EUR"))
    "((amount > 10) AND (currency = 'EUR'))"
    >>> and_()
    lit(True)
    """
    exprs = [_expr(c) for c in conditions]
    if not exprs:
        return lit(True)
    out = exprs[0]
    for e in exprs[1:]:
        out = Call("and", (out, e))
    return out


def _expr(value: object) -> Expression:
    """Expressions pass through; Python values become literals; strings are literals too."""
    if isinstance(value, Expression):
        return value
    return lit(value)


def to_expression(value: object) -> Expression:
    """Accept an expression or a column name (as table operations do)."""
    if isinstance(value, Expression):
        return value
    if isinstance(value, str):
        return Column(value)
    raise ValidationError(f"Expected an expression such as col('x'), got {value!r}.")


#: The aggregates that have a DISTINCT form (``Expression.distinct``).
DISTINCT_AGGREGATES = ("count", "sum", "avg", "min", "max")


def is_aggregate(e: Expression) -> bool:
    return isinstance(e, Call) and e.function.aggregate


def contains_aggregate(e: Expression) -> bool:
    return any(is_aggregate(x) for x in e.walk())


def conjuncts(e: Expression) -> list[Expression]:
    """Split ``a AND b AND c`` into ``[a, b, c]``."""
    if isinstance(e, Call) and e.name == "and":
        return [x for a in e.args for x in conjuncts(a)]
    return [e]


def in_table_term(e: Expression) -> tuple[InTable, bool] | None:
    """``x IN t`` -> (the IN, False); ``NOT (x IN t)`` -> (the IN, True); else None."""
    if isinstance(e, InTable):
        return e, False
    if isinstance(e, Call) and e.name == "not" and isinstance(e.args[0], InTable):
        return e.args[0], True
    return None


def strip_alias(e: Expression) -> Expression:
    return e.expr if isinstance(e, Alias) else e


def _interval_sql(delta: dt.timedelta) -> str:
    total_ms = int(delta.total_seconds() * 1000)
    for unit, ms in (
        ("DAY", 86_400_000),
        ("HOUR", 3_600_000),
        ("MINUTE", 60_000),
        ("SECOND", 1000),
    ):
        if total_ms % ms == 0:
            return f"INTERVAL '{total_ms // ms}' {unit}"
    return f"INTERVAL '{total_ms / 1000}' SECOND"
