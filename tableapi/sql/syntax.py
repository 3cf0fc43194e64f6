"""The syntax tree of Flink SQL statements, as :mod:`tableapi.sql.parser` builds it.

Plain immutable nodes, each with the :class:`Span` of source text it came from (errors quote
line and column). Nothing here knows tables or types: :mod:`tableapi.sql.planner` resolves
names and builds Table API plans from these nodes.

Example::

    >>> from tableapi.sql.parser import parse_statement
    >>> stmt = parse_statement("SELECT a + 1 AS b FROM T")
    >>> type(stmt).__name__, stmt.query.items[0].alias
    ('QueryStatement', 'b')
"""

from __future__ import annotations

from typing import Union

import attrs


@attrs.frozen
class Span:
    """Character offsets ``[start, end)`` into the statement text."""

    start: int
    end: int

    def to(self, other: Span) -> Span:
        """The span from this one's start to ``other``'s end.

        >>> Span(0, 3).to(Span(7, 9))
        Span(start=0, end=9)
        """
        return Span(self.start, max(self.end, other.end))


# -- expressions -----------------------------------------------------------------------------


@attrs.frozen
class Name:
    """A column reference, maybe qualified: ``amount``, ``o.amount``."""

    parts: tuple[str, ...]
    span: Span

    def __str__(self) -> str:
        return ".".join(self.parts)


@attrs.frozen
class Star:
    """``*`` or ``t.*`` in a SELECT list (``COUNT(*)`` is a :class:`Func` with ``star``)."""

    qualifier: tuple[str, ...]
    span: Span


@attrs.frozen
class Lit:
    """A literal: ``kind`` is number, string, boolean, null, date, time or timestamp."""

    kind: str
    text: str  # the number's digits, the string's value, TRUE/FALSE
    span: Span


@attrs.frozen
class IntervalLit:
    """``INTERVAL '4' HOUR`` (``INTERVAL '1:30' HOUR TO MINUTE``): ``text`` as written."""

    text: str
    unit: str
    to_unit: str | None
    negative: bool
    span: Span


@attrs.frozen
class Unary:
    """``NOT x``, ``-x``, ``+x`` (op: not, neg, pos)."""

    op: str
    operand: Expr
    span: Span


@attrs.frozen
class Binary:
    """A binary operator: and, or, =, <>, <, <=, >, >=, +, -, *, /, %, ||, is_distinct,
    is_not_distinct."""

    op: str
    left: Expr
    right: Expr
    span: Span


@attrs.frozen
class Func:
    """``name(args)``, ``COUNT(*)`` (``star``), ``COUNT(DISTINCT x)`` (``distinct``);
    ``over`` is set for ``... OVER (...)``, ``window`` holds its ``(PARTITION BY .. ORDER BY
    ..)`` (None: a named window or a frame; the planner runs window Top-N shapes only)."""

    name: str
    args: tuple[Expr, ...]
    span: Span
    distinct: bool = False
    star: bool = False
    over: bool = False
    window: OverWindow | None = None


@attrs.frozen
class OverWindow:
    """``OVER ([PARTITION BY e, ..] [ORDER BY o, ..])`` (no frame)."""

    partition: tuple[Expr, ...]
    order: tuple[OrderItem, ...]
    span: Span


@attrs.frozen
class CastE:
    """``CAST(x AS type)`` (``TRY_CAST`` when ``try_``); ``type`` is Flink's type text."""

    operand: Expr
    type: str
    span: Span
    try_: bool = False


@attrs.frozen
class CaseE:
    """``CASE [operand] WHEN .. THEN .. [ELSE ..] END``."""

    operand: Expr | None
    whens: tuple[tuple[Expr, Expr], ...]
    default: Expr | None
    span: Span


@attrs.frozen
class Between:
    """``x [NOT] BETWEEN low AND high``."""

    operand: Expr
    low: Expr
    high: Expr
    negated: bool
    span: Span


@attrs.frozen
class InList:
    """``x [NOT] IN (v1, v2, ...)``."""

    operand: Expr
    items: tuple[Expr, ...]
    negated: bool
    span: Span


@attrs.frozen
class InQuery:
    """``x [NOT] IN (SELECT ...)`` (``x`` may be a :class:`RowE`)."""

    operand: Expr
    query: Query
    negated: bool
    span: Span


@attrs.frozen
class Exists:
    """``[NOT] EXISTS (SELECT ...)``."""

    query: Query
    negated: bool
    span: Span


@attrs.frozen
class ScalarQuery:
    """``(SELECT ...)`` used as a value (refused by the planner, by name)."""

    query: Query
    span: Span


@attrs.frozen
class Is:
    """``x IS [NOT] NULL|TRUE|FALSE|UNKNOWN``."""

    operand: Expr
    what: str
    negated: bool
    span: Span


@attrs.frozen
class Like:
    """``x [NOT] LIKE pattern`` (``SIMILAR TO`` is refused by the parser)."""

    operand: Expr
    pattern: Expr
    negated: bool
    span: Span


@attrs.frozen
class RowE:
    """``(a, b)`` or ``ROW(a, b)``: several values (the left of a multi-column IN)."""

    items: tuple[Expr, ...]
    span: Span


Expr = Union[  # noqa: UP007 (the alias is evaluated at import: keep Python 3.10's Union)
    Name,
    Star,
    Lit,
    IntervalLit,
    Unary,
    Binary,
    Func,
    CastE,
    CaseE,
    Between,
    InList,
    InQuery,
    Exists,
    ScalarQuery,
    Is,
    Like,
    RowE,
]


@attrs.frozen
class GroupingSets:
    """``GROUPING SETS ((a, b), (a), ())`` in a GROUP BY; ``ROLLUP (a, b)`` and ``CUBE (a, b)``
    are parsed into the sets they stand for."""

    sets: tuple[tuple[Expr, ...], ...]
    span: Span


# -- queries ---------------------------------------------------------------------------------


@attrs.frozen
class HintCall:
    """One hint of a ``/*+ ... */`` comment: ``BROADCAST(t1, t2)`` (``args``) or
    ``OPTIONS('k' = 'v')`` / ``LOOKUP('table' = 'D', ...)`` (``options``)."""

    name: str
    args: tuple[str, ...]
    options: tuple[tuple[str, str], ...]
    span: Span


@attrs.frozen
class TableRef:
    """A table or view by name in FROM: ``Orders [/*+ OPTIONS(..) */] [FOR SYSTEM_TIME AS OF
    expr] [[AS] o [(c1, ..)]]``."""

    name: tuple[str, ...]
    alias: str | None
    column_aliases: tuple[str, ...]
    as_of: Expr | None
    hints: tuple[HintCall, ...]
    span: Span


@attrs.frozen
class SubqueryRef:
    """``(SELECT ...) [AS] t [(c1, ..)]`` in FROM."""

    query: Query
    alias: str | None
    column_aliases: tuple[str, ...]
    span: Span


@attrs.frozen
class LateralRef:
    """``LATERAL TABLE(fn(args)) [AS] r [(c1, ..)]``."""

    call: Func
    alias: str | None
    column_aliases: tuple[str, ...]
    span: Span


@attrs.frozen
class JoinRef:
    """``left [kind] JOIN right ON cond``; kind: inner, left, right, full, cross or comma
    (``FROM a, b``)."""

    kind: str
    left: FromItem
    right: FromItem
    on: Expr | None
    using: tuple[str, ...]
    natural: bool
    span: Span


@attrs.frozen
class TvfArg:
    """One argument of a table-valued function call, positional or named (``SIZE =>
    INTERVAL '1' HOUR``): ``TABLE t [PARTITION BY k, ..]`` (``table``, ``partition``),
    ``DESCRIPTOR(c, ..)`` (``descriptor``) or an expression (``value``)."""

    name: str | None
    table: tuple[str, ...] | None
    descriptor: tuple[str, ...] | None
    value: Expr | None
    span: Span
    partition: tuple[str, ...] = ()


@attrs.frozen
class WindowRef:
    """``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) [[AS] w [(c1, ..)]]``
    (a window TVF; ``function`` upper-cased)."""

    function: str
    args: tuple[TvfArg, ...]
    alias: str | None
    column_aliases: tuple[str, ...]
    span: Span


FromItem = Union[TableRef, SubqueryRef, LateralRef, JoinRef, WindowRef]  # noqa: UP007


@attrs.frozen
class SelectItem:
    """One item of a SELECT list: an expression (or a :class:`Star`) and its alias."""

    expr: Expr
    alias: str | None
    span: Span


@attrs.frozen
class OrderItem:
    expr: Expr
    descending: bool
    nulls: str | None  # FIRST / LAST
    span: Span


@attrs.frozen
class Select:
    """One SELECT block (ORDER BY and LIMIT live on :class:`Query`)."""

    hints: tuple[HintCall, ...]
    distinct: bool
    items: tuple[SelectItem, ...]
    from_: FromItem | None
    where: Expr | None
    group_by: tuple[Expr | GroupingSets, ...]
    having: Expr | None
    span: Span


@attrs.frozen
class SetOp:
    """``left UNION [ALL] right`` (INTERSECT / EXCEPT are refused by the planner, by name)."""

    op: str  # union, intersect, except
    all: bool
    left: QueryBody
    right: QueryBody
    span: Span


@attrs.frozen
class Values:
    """``VALUES (..), (..)``."""

    rows: tuple[tuple[Expr, ...], ...]
    span: Span


@attrs.frozen
class Query:
    """A query: its body (a SELECT, a set operation, VALUES or a nested query), the CTEs of
    its WITH clause, ORDER BY, LIMIT/FETCH and OFFSET."""

    body: QueryBody
    with_: tuple[tuple[str, tuple[str, ...], Query], ...]
    order_by: tuple[OrderItem, ...]
    limit: Expr | None
    offset: Expr | None
    span: Span

    @property
    def items(self) -> tuple[SelectItem, ...]:
        """The SELECT list of a plain SELECT body (for tests and messages)."""
        return self.body.items if isinstance(self.body, Select) else ()


QueryBody = Union[Select, SetOp, Values, Query]  # noqa: UP007


# -- statements ------------------------------------------------------------------------------


@attrs.frozen
class ColumnDef:
    """A column of CREATE TABLE: physical (``type``), computed (``expr``) or metadata
    (``metadata``, refused by the planner)."""

    name: str
    type: str | None
    expr: Expr | None
    expr_text: str | None  # the computed column's SQL as written
    metadata: bool
    comment: str | None
    primary_key: bool  # an inline ``PRIMARY KEY NOT ENFORCED``
    span: Span


@attrs.frozen
class WatermarkDef:
    column: str
    expr: Expr
    expr_text: str
    span: Span


@attrs.frozen
class CreateTable:
    name: tuple[str, ...]
    temporary: bool
    if_not_exists: bool
    columns: tuple[ColumnDef, ...]
    watermark: WatermarkDef | None
    primary_key: tuple[str, ...]
    primary_key_span: Span | None
    options: tuple[tuple[str, str, Span], ...]
    partitioned_by: tuple[str, ...]
    like: tuple[str, ...] | None
    as_query: Query | None
    comment: str | None
    span: Span


@attrs.frozen
class CreateView:
    name: tuple[str, ...]
    temporary: bool
    if_not_exists: bool
    column_aliases: tuple[str, ...]
    query: Query
    span: Span


@attrs.frozen
class Drop:
    """``DROP [TEMPORARY] TABLE|VIEW|FUNCTION [IF EXISTS] name``, ``DROP TEMPORARY SYSTEM
    FUNCTION [IF EXISTS] name``."""

    what: str  # TABLE, VIEW, FUNCTION or SYSTEM FUNCTION
    name: tuple[str, ...]
    temporary: bool
    if_exists: bool
    span: Span


@attrs.frozen
class Show:
    """``SHOW TABLES | VIEWS | [USER] FUNCTIONS | CATALOGS | DATABASES | CURRENT CATALOG |
    CURRENT DATABASE``, or ``SHOW CREATE TABLE|VIEW name``."""

    what: str
    name: tuple[str, ...] = ()
    span: Span = Span(0, 0)


@attrs.frozen
class Describe:
    name: tuple[str, ...]
    span: Span


@attrs.frozen
class Explain:
    statement: Statement
    span: Span


@attrs.frozen
class SetOption:
    """``SET 'key' = 'value'``; ``SET`` alone lists the options (key None)."""

    key: str | None
    value: str | None
    span: Span


@attrs.frozen
class ResetOption:
    """``RESET 'key'``; ``RESET`` alone resets every option (key None)."""

    key: str | None
    span: Span


@attrs.frozen
class Insert:
    """``INSERT INTO|OVERWRITE t [(c1, ..)] query``."""

    table: tuple[str, ...]
    overwrite: bool
    columns: tuple[str, ...]
    query: Query
    span: Span


@attrs.frozen
class StatementSet:
    """``EXECUTE STATEMENT SET BEGIN INSERT ..; INSERT ..; END``."""

    inserts: tuple[Insert, ...]
    span: Span


@attrs.frozen
class Use:
    """``USE CATALOG name`` (``catalog``), or ``USE [catalog.]database``."""

    name: tuple[str, ...]
    catalog: bool
    span: Span


@attrs.frozen
class QueryStatement:
    query: Query
    span: Span


Statement = Union[  # noqa: UP007
    CreateTable,
    CreateView,
    Drop,
    Show,
    Describe,
    Explain,
    SetOption,
    ResetOption,
    Insert,
    StatementSet,
    QueryStatement,
    Use,
]
