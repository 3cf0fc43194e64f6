"""Relational nodes with one input (projection, filter, aggregation, ordering) and union.

Example::

    >>> from tableapi.plan import ElementsSource, Project, Scan
    >>> from tableapi.types import INT, RowType
    >>> from tableapi.expressions import col
    >>> scan = Scan("T", ElementsSource(((1,),)), RowType.of(("a", INT)))
    >>> Project(scan, (col("a") + 1,), ("b",)).row_type.names
    ('b',)
"""

from __future__ import annotations

import attrs

from tableapi.errors import ValidationError
from tableapi.expressions import (
    Call,
    Column,
    Expression,
    InTable,
    conjuncts,
    contains_aggregate,
    in_table_term,
    is_aggregate,
)
from tableapi.plan.base import BinaryNode, PlanNode, UnaryNode
from tableapi.types import Field, RowType, common_type


@attrs.frozen(eq=False)
class Project(UnaryNode):
    """Computes one output column per expression."""

    exprs: tuple[Expression, ...]
    names: tuple[str, ...]

    def derive_row_type(self) -> RowType:
        if len(self.exprs) != len(self.names):
            raise ValidationError("Project needs one name per expression.")
        dupes = sorted({n for n in self.names if self.names.count(n) > 1})
        if dupes:
            raise ValidationError(
                f"Duplicate output column name(s) {dupes}: give each column a distinct name "
                "with .alias(...)."
            )
        fields = []
        for e, n in zip(self.exprs, self.names, strict=True):
            if contains_aggregate(e):
                raise ValidationError(
                    f"Aggregate {e} is not allowed here; use group_by(...).select(...) or "
                    "select() with only aggregates."
                )
            fields.append(Field(n, self.check_expr(e, self.input.row_type, "select()")))
        return RowType(tuple(fields))

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        # A key survives when every key column is passed through (possibly renamed).
        renamed = {
            e.name: n for e, n in zip(self.exprs, self.names, strict=True) if isinstance(e, Column)
        }
        return tuple(
            tuple(renamed[c] for c in key)
            for key in self.input.unique_keys
            if all(c in renamed for c in key)
        )


@attrs.frozen(eq=False)
class Filter(UnaryNode):
    """Keeps the rows for which ``condition`` is true."""

    condition: Expression

    def derive_row_type(self) -> RowType:
        if contains_aggregate(self.condition):
            raise ValidationError(
                f"where() cannot contain an aggregate ({self.condition}); filter the result "
                "of group_by(...).select(...) instead."
            )
        t = self.check_expr(self.condition, self.input.row_type, "where()", in_table_ok=True)
        if t.name not in ("BOOLEAN", "NULL"):
            raise ValidationError(f"where() needs a BOOLEAN condition; {self.condition} is {t}.")
        for term in conjuncts(self.condition):  # the semi-join rule needs IN as an AND term
            inside = in_table_term(term) is None
            if inside and any(isinstance(e, InTable) for e in term.walk()):
                raise ValidationError(
                    f"IN with a table is supported only as a top-level AND term of where(); "
                    f"found it inside {term}. (NOT IN, ~col(...).in_(table), is such a term "
                    "too.)"
                )
        return self.input.row_type


#: The aggregates whose result is NULL only over no (non-NULL) value.
_NOT_EMPTY = ("sum", "avg", "min", "max")


@attrs.frozen(eq=False)
class Aggregate(UnaryNode):
    """Groups by column references and computes named aggregate calls."""

    group_keys: tuple[str, ...]
    aggs: tuple[tuple[str, Expression], ...]
    # STATE_TTL hints that name the table the aggregation reads (streaming: its state TTL)
    hints: tuple[Hint, ...] = ()

    def derive_row_type(self) -> RowType:
        row = self.input.row_type
        fields = [row.field(k, "group_by()") for k in self.group_keys]
        for name, agg in self.aggs:
            if not is_aggregate(agg):
                raise ValidationError(f"{agg} is not an aggregate call.")
            t = self.check_expr(agg, row, "an aggregate")
            # Calcite's ARG0_NULLABLE_IF_EMPTY (SUM, AVG, MIN, MAX): a group has a row, so
            # the result of a NOT NULL argument is NOT NULL, except in a global aggregate.
            if isinstance(agg, Call) and agg.name.removesuffix("_distinct") in _NOT_EMPTY:
                arg = agg.args[0].type_in(row)
                t = t.with_nullable(arg.nullable or not self.group_keys)
            fields.append(Field(name, t))
        return RowType(tuple(fields))

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return (self.group_keys,) if self.group_keys else ()


@attrs.frozen(eq=False)
class Distinct(UnaryNode):
    """Removes duplicate rows."""

    hints: tuple[Hint, ...] = ()  # as Aggregate's

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return (self.row_type.names,)


@attrs.frozen(eq=False)
class Sort(UnaryNode):
    """Orders rows by expressions wrapped in ``asc``/``desc`` calls."""

    keys: tuple[Expression, ...]

    def derive_row_type(self) -> RowType:
        for k in self.keys:
            self.check_expr(k, self.input.row_type, "order_by()")
        return self.input.row_type


@attrs.frozen(eq=False)
class Limit(UnaryNode):
    """The first ``fetch`` rows (all when None) after skipping ``offset``."""

    fetch: int | None
    offset: int = 0

    def derive_row_type(self) -> RowType:
        if (self.fetch is not None and self.fetch < 0) or self.offset < 0:
            raise ValidationError("limit() and offset() need non-negative row counts.")
        return self.input.row_type


@attrs.frozen(eq=False)
class Exchange(UnaryNode):
    """Hash-partitions the rows on ``keys`` (Flink's ``Exchange(distribution=[hash[...]])``):
    rows with equal keys meet in one task. Placed by rules (the hash lookup join)."""

    keys: tuple[Expression, ...]

    def derive_row_type(self) -> RowType:
        if not self.keys:
            raise ValidationError("internal: an Exchange hashes on at least one key")
        for k in self.keys:
            self.check_expr(k, self.input.row_type, "the hash distribution")
        return self.input.row_type


@attrs.frozen(eq=False)
class QueryHints(UnaryNode):
    """Hints given with ``Table.with_hint``; the hint rule moves them onto joins."""

    hints: tuple[Hint, ...]


@attrs.frozen
class Hint:
    """A join hint naming the tables it applies to: ``BROADCAST(Product)``."""

    name: str
    tables: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        opts = "".join(f", {k}={v}" for k, v in self.options)
        return f"{self.name}({', '.join(self.tables)}{opts})"


@attrs.frozen(eq=False)
class Union(BinaryNode):
    """UNION ALL (or UNION when ``distinct``) of inputs with matching columns by position."""

    left: PlanNode
    right: PlanNode
    distinct: bool = False

    def derive_row_type(self) -> RowType:
        lrow, rrow = self.left.row_type, self.right.row_type
        if len(lrow) != len(rrow):
            raise ValidationError(
                f"union needs the same number of columns on both sides: "
                f"left [{', '.join(lrow.names)}], right [{', '.join(rrow.names)}]."
            )
        fields = []
        for lf, rf in zip(lrow, rrow, strict=True):
            t = common_type(lf.type, rf.type)
            if t is None:
                raise ValidationError(
                    f"union column {lf.name!r} is {lf.type} on the left but {rf.type} on the "
                    "right; cast one side."
                )
            fields.append(Field(lf.name, t))
        return RowType(tuple(fields))
