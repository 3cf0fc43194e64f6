"""SQL-string expressions (``"amount * 2"``, ``"PROCTIME()"``) parsed into expression trees.

Flink accepts SQL text for computed columns and watermarks; so do we. The text is parsed
with sqlglot and turned into the same nodes the fluent API builds, so both are typed and
validated alike.

Example::

    >>> str(parse_expression("o_rowtime - INTERVAL '5' SECOND"))
    "(o_rowtime - INTERVAL '5' SECOND)"
"""

from __future__ import annotations

import datetime as dt
import decimal

import sqlglot
from sqlglot import exp

from tableapi.errors import ValidationError
from tableapi.expressions import Call, Expression, call, col, if_then_else, lit
from tableapi.types import DataType

_BINARY: dict[type, str] = {
    exp.Add: "plus",
    exp.Sub: "minus",
    exp.Mul: "times",
    exp.Div: "divide",
    exp.Mod: "mod",
    exp.EQ: "equals",
    exp.NEQ: "not_equals",
    exp.LT: "less_than",
    exp.LTE: "less_than_or_equal",
    exp.GT: "greater_than",
    exp.GTE: "greater_than_or_equal",
    exp.And: "and",
    exp.Or: "or",
    exp.Like: "like",
    exp.NullSafeEQ: "is_not_distinct_from",
    exp.NullSafeNEQ: "is_distinct_from",
}
_UNITS = {
    "SECOND": "seconds",
    "MINUTE": "minutes",
    "HOUR": "hours",
    "DAY": "days",
    "MILLISECOND": "milliseconds",
}


def parse_expression(text: str) -> Expression:
    """Parse one SQL scalar expression; a clear error names what is not allowed."""
    try:
        tree = sqlglot.parse_one(text)
    except sqlglot.errors.ParseError as e:
        raise ValidationError(f"Cannot parse SQL expression {text!r}: {e}") from None
    return _convert(tree, text)  # type: ignore[arg-type]


def _convert(node: exp.Expression, text: str) -> Expression:
    conv = lambda n: _convert(n, text)  # noqa: E731
    if isinstance(node, exp.Select | exp.Subquery | exp.Exists):
        raise ValidationError(f"Subqueries are not allowed in the expression {text!r}.")
    if isinstance(node, exp.Paren):
        return conv(node.this)
    if isinstance(node, exp.Column):
        if node.table:
            raise ValidationError(
                f"Qualified column {node.sql()!r} in {text!r}: refer to columns by name only."
            )
        return col(node.name)
    if isinstance(node, exp.Literal):
        return lit(node.this if node.is_string else _number(node.this))
    if isinstance(node, exp.Boolean):
        return lit(bool(node.this))
    if isinstance(node, exp.Null):
        return lit(None)
    if isinstance(node, exp.Interval):
        amount = node.this.name if isinstance(node.this, exp.Literal) else node.this.sql()
        unit = (node.unit.name if node.unit else "SECOND").upper().rstrip("S")
        if unit not in _UNITS:
            raise ValidationError(f"Unsupported interval unit {unit!r} in {text!r}.")
        return lit(dt.timedelta(**{_UNITS[unit]: float(_number(amount.strip("'")))}))
    if isinstance(node, exp.Cast):
        return conv(node.this).cast(DataType.parse(node.to.sql(dialect="")))
    if isinstance(node, exp.Neg):
        return -conv(node.this)
    if isinstance(node, exp.Not):
        return ~conv(node.this)
    if isinstance(node, exp.Is):
        if isinstance(node.expression, exp.Null):
            return conv(node.this).is_null
        raise ValidationError(f"Unsupported IS expression in {text!r}.")
    if isinstance(node, exp.Between):
        return conv(node.this).between(conv(node.args["low"]), conv(node.args["high"]))
    if isinstance(node, exp.In):
        if node.args.get("query"):
            raise ValidationError(f"Subqueries are not allowed in the expression {text!r}.")
        return conv(node.this).in_(*(conv(e) for e in node.expressions))
    if isinstance(node, exp.DPipe):
        return call("concat", conv(node.this), conv(node.expression))
    if type(node) in _BINARY:
        return Call(_BINARY[type(node)], (conv(node.this), conv(node.expression)))
    if isinstance(node, exp.If):
        otherwise = node.args.get("false")
        return if_then_else(
            conv(node.this), conv(node.args["true"]), conv(otherwise) if otherwise else lit(None)
        )
    if isinstance(node, exp.Case):
        operand = conv(node.this) if node.this else None  # CASE x WHEN 1 THEN ... (simple CASE)
        result: Expression = conv(node.args["default"]) if node.args.get("default") else lit(None)
        for branch in reversed(node.args["ifs"]):
            cond = conv(branch.this) if operand is None else operand == conv(branch.this)
            result = if_then_else(cond, conv(branch.args["true"]), result)
        return result
    if isinstance(node, exp.Count) and isinstance(node.this, exp.Star):
        return Call("count", ())
    if isinstance(node, exp.Anonymous):
        return call(node.name, *(conv(a) for a in node.expressions))
    # sqlglot normalizes these to other functions or adds default arguments: undo that.
    if (
        isinstance(node, exp.Trim)
        and node.args.get("position") in ("LEADING", "TRAILING")
        and node.expression is None
    ):
        return call("ltrim" if node.args["position"] == "LEADING" else "rtrim", conv(node.this))
    if isinstance(node, exp.Pad):
        fill = node.args.get("fill_pattern")
        return call(
            "lpad" if node.args.get("is_left") else "rpad",
            conv(node.this),
            conv(node.expression),
            *([conv(fill)] if fill is not None else []),
        )
    if isinstance(node, exp.Initcap):
        return call("initcap", conv(node.this))  # drop sqlglot's default delimiters argument
    if (
        isinstance(node, exp.Log)
        and node.expression is not None
        and isinstance(node.this, exp.Literal)
        and node.this.name == "10"
    ):
        return call("log10", conv(node.expression))
    if isinstance(node, exp.Func):
        name = {"LENGTH": "char_length", "DAY_OF_MONTH": "dayofmonth"}.get(
            node.sql_name(), node.sql_name()
        )
        return call(name, *(conv(a) for a in node.iter_expressions()))
    raise ValidationError(f"Unsupported SQL construct {node.sql()!r} in {text!r}.")


def _number(text: str) -> int | float | decimal.Decimal:
    """A numeric literal as Flink SQL types it: ``12`` an INT, ``1.5`` a DECIMAL (exact:
    ``0.1 + 0.2`` is 0.3), ``1.5E3`` a DOUBLE."""
    try:
        return int(text)
    except ValueError:
        pass
    if "e" in text.lower():
        return float(text)
    return decimal.Decimal(text)
