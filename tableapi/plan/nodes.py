"""Logical plan nodes: small, immutable, each deriving its row type and validating its input.

A node is built by the API layer and rewritten by the rules in ``tableapi.rules``; the
compiler turns the optimized tree into a Spark Connect DataFrame.

Example::

    >>> scan = Scan("T", ElementsSource(((1, "a"),)), RowType.of(("id", INT), ("s", STRING)))
    >>> Filter(scan, col("id") > 0).row_type.names
    ('id', 's')
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import Any

import attrs

from tableapi.errors import ValidationError
from tableapi.expressions import (
    Call,
    Column,
    Expression,
    InTable,
    conjuncts,
    contains_aggregate,
    is_aggregate,
)
from tableapi.schema import Schema
from tableapi.types import Field, RowType, TimeKind


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


class PlanNode:
    """Base of plan nodes. Subclasses set ``row_type`` in ``__attrs_post_init__``."""

    row_type: RowType

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return ()

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return self

    def walk(self) -> Iterator[PlanNode]:
        yield self
        for i in self.inputs:
            yield from i.walk()

    def transform_up(self, fn: Any) -> PlanNode:
        """Rebuild bottom-up; ``fn(node)`` returns a replacement or None to keep the node."""
        inputs = tuple(i.transform_up(fn) for i in self.inputs)
        node = (
            self
            if all(a is b for a, b in zip(inputs, self.inputs, strict=True))
            else self.with_inputs(inputs)
        )
        replaced = fn(node)
        return node if replaced is None else replaced

    def table_names(self) -> set[str]:
        """The catalog tables this subtree reads."""
        return {n.table_name for n in self.walk() if isinstance(n, Scan)}

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        """Column sets that are unique in this node's output (Flink's upsert keys)."""
        return ()

    def _check_expr(
        self, e: Expression, row: RowType, where: str, in_table_ok: bool = False
    ) -> Any:
        """Type an expression against ``row``, naming ``where`` in errors."""
        if not in_table_ok and any(isinstance(x, InTable) for x in e.walk()):
            raise ValidationError(
                f"IN with a table is supported only in where() (a semi join); {where} has "
                f"{e}. Filter with where(col(...).in_(table)), or use semi_join()/anti_join()."
            )
        for c in e.column_names():
            if c not in row:
                row.field(c, where)
        return e.type_in(row)


# -- sources ------------------------------------------------------------------------------------
@attrs.frozen(eq=False)
class FileSource:
    """Files under ``path`` in ``format`` (json, csv, parquet), read with Spark's readers."""

    path: str
    format: str
    options: tuple[tuple[str, str], ...] = ()
    # ``changelog.op-column``: the column holding each row's kind (+I/-U/+U/-D or I/UB/UA/D);
    # read from the files, never part of the table.
    op_column: str | None = None
    # ``source.monitor-interval``: the directory is watched for new files (unbounded);
    # None: bounded, the files present when the query starts (Flink's default).
    monitor_interval_ms: int | None = None

    @property
    def bounded(self) -> bool:
        return self.monitor_interval_ms is None

    def __str__(self) -> str:
        return f"filesystem, path={self.path}, format={self.format}"


@attrs.frozen(eq=False)
class ElementsSource:
    """Rows given inline (``env.from_elements``)."""

    rows: tuple[tuple[Any, ...], ...]

    def __str__(self) -> str:
        return f"values, {len(self.rows)} rows"


@attrs.frozen(eq=False)
class SparkSource:
    """A Spark Connect DataFrame handed in by the user (``env.from_spark``)."""

    dataframe: Any

    def __str__(self) -> str:
        return "spark dataframe"


Source = FileSource | ElementsSource | SparkSource


@attrs.frozen(eq=False)
class Scan(PlanNode):
    """Reads a table. Before the computed-column rule it shows every column of the schema;
    after it (``physical_only``) just the physical ones, with a projection above."""

    table_name: str
    source: Source
    declared: RowType | Schema
    physical_only: bool = False

    def __attrs_post_init__(self) -> None:
        if isinstance(self.declared, Schema):
            row = self.declared.physical_row_type if self.physical_only else self.declared.row_type
        else:
            row = self.declared
        _set(self, "row_type", row)

    @property
    def schema(self) -> Schema | None:
        return self.declared if isinstance(self.declared, Schema) else None

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        pk = self.schema.primary_key if self.schema else ()
        return (pk,) if pk else ()


@attrs.frozen(eq=False)
class Project(PlanNode):
    """Computes one output column per expression."""

    input: PlanNode
    exprs: tuple[Expression, ...]
    names: tuple[str, ...]

    def __attrs_post_init__(self) -> None:
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
            fields.append(Field(n, self._check_expr(e, self.input.row_type, "select()")))
        _set(self, "row_type", RowType(tuple(fields)))

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return Project(inputs[0], self.exprs, self.names)

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
class Filter(PlanNode):
    """Keeps the rows for which ``condition`` is true."""

    input: PlanNode
    condition: Expression

    def __attrs_post_init__(self) -> None:
        if contains_aggregate(self.condition):
            raise ValidationError(
                f"where() cannot contain an aggregate ({self.condition}); filter the result "
                "of group_by(...).select(...) instead."
            )
        t = self._check_expr(self.condition, self.input.row_type, "where()", in_table_ok=True)
        if t.name not in ("BOOLEAN", "NULL"):
            raise ValidationError(f"where() needs a BOOLEAN condition; {self.condition} is {t}.")
        for term in conjuncts(self.condition):  # the semi-join rule needs IN as an AND term
            if not isinstance(term, InTable) and any(isinstance(e, InTable) for e in term.walk()):
                raise ValidationError(
                    f"IN with a table is supported only as a top-level AND term of where(); "
                    f"found it inside {term}."
                )
        _set(self, "row_type", self.input.row_type)

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return Filter(inputs[0], self.condition)

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return self.input.unique_keys


@attrs.frozen(eq=False)
class Aggregate(PlanNode):
    """Groups by column references and computes named aggregate calls."""

    input: PlanNode
    group_keys: tuple[str, ...]
    aggs: tuple[tuple[str, Expression], ...]

    def __attrs_post_init__(self) -> None:
        row = self.input.row_type
        fields = [row.field(k, "group_by()") for k in self.group_keys]
        for name, agg in self.aggs:
            if not is_aggregate(agg):
                raise ValidationError(f"{agg} is not an aggregate call.")
            fields.append(Field(name, self._check_expr(agg, row, "an aggregate")))
        _set(self, "row_type", RowType(tuple(fields)))

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return Aggregate(inputs[0], self.group_keys, self.aggs)

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return (self.group_keys,) if self.group_keys else ()


class JoinKind(Enum):
    INNER = "InnerJoin"
    LEFT = "LeftOuterJoin"
    RIGHT = "RightOuterJoin"
    FULL = "FullOuterJoin"
    SEMI = "LeftSemiJoin"
    ANTI = "LeftAntiJoin"

    @property
    def spark_how(self) -> str:
        return {
            "InnerJoin": "inner",
            "LeftOuterJoin": "left",
            "RightOuterJoin": "right",
            "FullOuterJoin": "full",
            "LeftSemiJoin": "left_semi",
            "LeftAntiJoin": "left_anti",
        }[self.value]

    @property
    def keeps_right_columns(self) -> bool:
        return self not in (JoinKind.SEMI, JoinKind.ANTI)


@attrs.frozen
class Hint:
    """A join hint naming the tables it applies to: ``BROADCAST(Product)``."""

    name: str
    tables: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        opts = "".join(f", {k}={v}" for k, v in self.options)
        return f"{self.name}({', '.join(self.tables)}{opts})"


@attrs.frozen
class EquiKey:
    """``left = right`` (or IS NOT DISTINCT FROM when ``null_safe``) between the two sides."""

    left: str
    right: str
    null_safe: bool = False

    def __str__(self) -> str:
        op = "IS NOT DISTINCT FROM" if self.null_safe else "="
        return f"{self.left} {op} {self.right}"


@attrs.frozen
class IntervalBounds:
    """An interval join's window: ``lower_ms <= left_time - right_time <= upper_ms``."""

    left_time: str
    right_time: str
    lower_ms: int
    upper_ms: int


@attrs.frozen(eq=False)
class Join(PlanNode):
    """A two-input join. ``equi_keys``/``residual`` are filled by the join-condition rule;
    ``hints`` by the hint rule, each with the side (``left``/``right``) it applies to."""

    left: PlanNode
    right: PlanNode
    kind: JoinKind
    condition: Expression | None
    hints: tuple[tuple[Hint, str], ...] = ()
    equi_keys: tuple[EquiKey, ...] | None = None
    residual: Expression | None = None
    interval: IntervalBounds | None = None  # set by the interval-join rule

    def __attrs_post_init__(self) -> None:
        lrow, rrow = self.left.row_type, self.right.row_type
        both = [n for n in lrow.names if n in rrow]
        if both and self.kind.keeps_right_columns:
            raise ValidationError(
                f"Column(s) {both} exist on both sides of the join. Rename one side first, "
                f"e.g. right.rename_columns(col({both[0]!r}).alias('r_{both[0]}')); "
                f"left columns: [{', '.join(lrow.names)}], "
                f"right columns: [{', '.join(rrow.names)}]."
            )
        combined = RowType(lrow.fields + tuple(f for f in rrow.fields if f.name not in lrow))
        if self.condition is not None:
            used = self.condition.column_names()
            ambiguous = sorted(used & set(both))
            if ambiguous:
                raise ValidationError(
                    f"Column(s) {ambiguous} in the join condition exist on both sides; rename "
                    "one side first with rename_columns(col(...).alias(...))."
                )
            if contains_aggregate(self.condition):
                raise ValidationError(f"A join condition cannot aggregate: {self.condition}.")
            t = self._check_expr(self.condition, combined, "the join condition")
            if t.name not in ("BOOLEAN", "NULL"):
                raise ValidationError(f"A join condition must be BOOLEAN; {self.condition} is {t}.")
        if not self.kind.keeps_right_columns:
            row = lrow
        else:
            left_nullable = self.kind in (JoinKind.RIGHT, JoinKind.FULL)
            right_nullable = self.kind in (JoinKind.LEFT, JoinKind.FULL)
            row = RowType(
                tuple(
                    Field(f.name, f.type.with_nullable(True) if left_nullable else f.type)
                    for f in lrow
                )
                + tuple(
                    Field(f.name, f.type.with_nullable(True) if right_nullable else f.type)
                    for f in rrow
                )
            )
        _set(self, "row_type", row)

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.left, self.right)

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return attrs.evolve(self, left=inputs[0], right=inputs[1])

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        if self.equi_keys is None:
            return ()  # the join-condition rule has not split the condition yet
        return join_unique_keys(self.kind, self.left, self.right, self.equi_keys)


def join_unique_keys(
    kind: JoinKind,
    left: PlanNode,
    right: PlanNode,
    equi_keys: tuple[EquiKey, ...],
) -> tuple[tuple[str, ...], ...]:
    """Flink's join upsert keys (FlinkRelMdUpsertKeys): an input key counts only if it
    contains the input's join keys, so that every change of a key is joined in one group and
    its changes reach the next operator in order. Then (FlinkRelMdUniqueKeys) each left key +
    right key is a key, and one side's keys stay keys when the other side is unique on its
    join keys and the join pads no nulls on the first side."""
    left_on = {k.left for k in equi_keys}
    right_on = {k.right for k in equi_keys}
    left_all = left.unique_keys
    left_keys = [k for k in left_all if left_on <= set(k)]
    if not kind.keeps_right_columns:
        return tuple(left_keys)
    right_all = right.unique_keys
    right_keys = [k for k in right_all if right_on <= set(k)]
    keys = [lk + rk for lk in left_keys for rk in right_keys]
    right_unique = any(set(k) <= right_on for k in right_all if k)
    left_unique = any(set(k) <= left_on for k in left_all if k)
    if right_unique and kind in (JoinKind.INNER, JoinKind.LEFT):
        keys += left_keys
    if left_unique and kind in (JoinKind.INNER, JoinKind.RIGHT):
        keys += right_keys
    return tuple(dict.fromkeys(keys))


@attrs.frozen(eq=False)
class MultiJoin(PlanNode):
    """FLIP-516: a left-deep chain of INNER/LEFT joins whose equi keys all reach one common
    key, run as one operator that keeps its inputs' rows and no intermediate results.
    ``joins[i]`` joins ``relations[i + 1]`` to everything before it; ``common_key[i]`` are
    the common key's columns in ``relations[i]``. Built by the multi-join rule from
    :class:`Join` nodes whose conditions are split."""

    relations: tuple[PlanNode, ...]
    joins: tuple[Join, ...]  # the original binary joins, bottom up (kind, keys, residual)
    common_key: tuple[tuple[str, ...], ...]

    def __attrs_post_init__(self) -> None:
        if len(self.relations) < 3 or len(self.joins) != len(self.relations) - 1:
            raise ValidationError("internal: a MultiJoin joins 3 or more relations")
        if any(j.kind not in (JoinKind.INNER, JoinKind.LEFT) for j in self.joins):
            raise ValidationError("internal: a MultiJoin joins with INNER and LEFT only")
        _set(self, "row_type", self.joins[-1].row_type)

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return self.relations

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        # Rebuild the binary chain on the new inputs, so the levels stay consistent.
        joins: list[Join] = []
        current = inputs[0]
        for join, right in zip(self.joins, inputs[1:], strict=True):
            current = attrs.evolve(join, left=current, right=right)
            joins.append(current)
        return MultiJoin(tuple(inputs), tuple(joins), self.common_key)

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return self.joins[-1].unique_keys


@attrs.frozen(eq=False)
class TemporalJoin(PlanNode):
    """``FOR SYSTEM_TIME AS OF``: each left row joins the version of the right (versioned)
    table valid at the left row's ``as_of`` time (event time), or the right table's latest
    row (processing time). Built by ``join_lateral`` and ``temporal_join``.

    The right table's primary key must be equated with left columns in the condition; the
    join-condition rule fills ``equi_keys`` and ``residual`` as for :class:`Join`.
    """

    left: PlanNode
    right: PlanNode
    kind: JoinKind  # INNER or LEFT
    condition: Expression
    as_of: str  # the left time attribute
    right_time: str | None  # the right rowtime (event time); None for processing time
    right_key: tuple[str, ...]
    equi_keys: tuple[EquiKey, ...] | None = None
    residual: Expression | None = None

    def __attrs_post_init__(self) -> None:
        lrow, rrow = self.left.row_type, self.right.row_type
        if self.kind not in (JoinKind.INNER, JoinKind.LEFT):
            raise ValidationError("A temporal join is an inner or a left outer join.")
        both = [n for n in lrow.names if n in rrow]
        if both:
            raise ValidationError(
                f"Column(s) {both} exist on both sides of the temporal join; rename one side "
                "first with rename_columns(col(...).alias(...))."
            )
        as_of = lrow.field(self.as_of, "the temporal join's as_of")
        if as_of.type.time_kind is TimeKind.NONE:
            raise ValidationError(
                f"as_of must be a time attribute of the left table (a rowtime with a watermark, "
                f"or PROCTIME()); {self.as_of} is a plain {as_of.type}. Declare "
                f".watermark({self.as_of!r}, ...) or use a PROCTIME() column."
            )
        if self.right_time is not None:
            rrow.field(self.right_time, "the versioned table's time attribute")
        for k in self.right_key:
            rrow.field(k, "the versioned table's primary key")
        combined = RowType(lrow.fields + rrow.fields)
        t = self._check_expr(self.condition, combined, "the temporal join condition")
        if t.name not in ("BOOLEAN", "NULL"):
            raise ValidationError(f"A join condition must be BOOLEAN; {self.condition} is {t}.")
        equated = set()
        for term in conjuncts(self.condition):
            if isinstance(term, Call) and term.name == "equals":
                names = [a.name for a in term.args if isinstance(a, Column)]
                if len(names) == 2 and ({names[0] in lrow, names[1] in lrow} == {True, False}):
                    equated.update(n for n in names if n in rrow)
        missing = [k for k in self.right_key if k not in equated]
        if missing:
            raise ValidationError(
                f"A temporal join needs the versioned table's primary key {list(self.right_key)} "
                f"in an equality with left columns; {missing} is not. Add e.g. "
                f"col('<left column>') == col({missing[0]!r}) to the condition."
            )
        nullable = self.kind is JoinKind.LEFT
        row = RowType(
            lrow.fields
            + tuple(
                Field(f.name, (f.type.with_nullable(True) if nullable else f.type).plain())
                for f in rrow
            )
        )
        _set(self, "row_type", row)

    @property
    def time(self) -> str:
        """``event`` (versioned table) or ``processing`` (latest row)."""
        return "event" if self.right_time is not None else "processing"

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.left, self.right)

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return attrs.evolve(self, left=inputs[0], right=inputs[1])

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return self.left.unique_keys  # one version per left row at most


@attrs.frozen(eq=False)
class Distinct(PlanNode):
    input: PlanNode

    def __attrs_post_init__(self) -> None:
        _set(self, "row_type", self.input.row_type)

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return Distinct(inputs[0])

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return (self.row_type.names,)


@attrs.frozen(eq=False)
class Sort(PlanNode):
    """Orders rows by expressions wrapped in ``asc``/``desc`` calls."""

    input: PlanNode
    keys: tuple[Expression, ...]

    def __attrs_post_init__(self) -> None:
        for k in self.keys:
            self._check_expr(k, self.input.row_type, "order_by()")
        _set(self, "row_type", self.input.row_type)

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return Sort(inputs[0], self.keys)

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return self.input.unique_keys


@attrs.frozen(eq=False)
class Limit(PlanNode):
    input: PlanNode
    fetch: int | None
    offset: int = 0

    def __attrs_post_init__(self) -> None:
        if (self.fetch is not None and self.fetch < 0) or self.offset < 0:
            raise ValidationError("limit() and offset() need non-negative row counts.")
        _set(self, "row_type", self.input.row_type)

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return Limit(inputs[0], self.fetch, self.offset)

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return self.input.unique_keys


@attrs.frozen(eq=False)
class Union(PlanNode):
    """UNION ALL (or UNION when ``distinct``) of inputs with matching columns by position."""

    left: PlanNode
    right: PlanNode
    distinct: bool = False

    def __attrs_post_init__(self) -> None:
        from tableapi.types import common_type

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
        _set(self, "row_type", RowType(tuple(fields)))

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.left, self.right)

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return Union(inputs[0], inputs[1], self.distinct)


@attrs.frozen(eq=False)
class QueryHints(PlanNode):
    """Hints given with ``Table.with_hint``; the hint rule moves them onto joins."""

    input: PlanNode
    hints: tuple[Hint, ...]

    def __attrs_post_init__(self) -> None:
        _set(self, "row_type", self.input.row_type)

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return QueryHints(inputs[0], self.hints)

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return self.input.unique_keys
