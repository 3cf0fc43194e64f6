"""SQL-string expressions (``"amount * 2"``, ``"PROCTIME()"``) parsed into expression trees.

Flink accepts SQL text for computed columns and watermarks; so do we. The text is parsed
by the product's SQL grammar (:mod:`tableapi.sql.parser`) and turned into the same nodes
the fluent API builds (:mod:`tableapi.sql.planner`), so both are typed and validated alike,
and a computed column means the same in ``Schema.column_by_expression`` and in ``CREATE
TABLE``.

Example::

    >>> str(parse_expression("o_rowtime - INTERVAL '5' SECOND"))
    "(o_rowtime - INTERVAL '5' SECOND)"
"""

from __future__ import annotations

from tableapi.errors import SqlParserError, ValidationError
from tableapi.expressions import Expression


def parse_expression(text: str) -> Expression:
    """Parse one SQL scalar expression over a table's columns (named without a qualifier);
    a clear error names what is not allowed.

    >>> parse_expression("CASE WHEN amount > 10 THEN 'big' END")
    call('if', call('greater_than', col('amount'), lit(10)), lit('big'), lit(None))
    """
    from tableapi.sql.parser import parse_expression as parse
    from tableapi.sql.planner import Scope, SqlPlanner

    try:
        tree = parse(text)
    except SqlParserError as e:
        raise ValidationError(f"Cannot parse SQL expression {text!r}: {e}") from None
    # aggregates parse here; a schema refuses them with its own message
    return SqlPlanner(None, text).expr(tree, Scope(free=True), aggregates=True)
