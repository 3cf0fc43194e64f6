"""Join nodes: binary joins (regular and interval), multi-way joins and temporal joins.

Example::

    >>> from tableapi.plan import ElementsSource, Join, JoinKind, Scan
    >>> from tableapi.types import BIGINT, STRING, RowType
    >>> from tableapi.expressions import col
    >>> orders = Scan("O", ElementsSource(()), RowType.of(("o_id", BIGINT), ("p_id", BIGINT)))
    >>> products = Scan("P", ElementsSource(()), RowType.of(("id", BIGINT), ("name", STRING)))
    >>> Join(orders, products, JoinKind.LEFT, col("p_id") == col("id")).row_type.names
    ('o_id', 'p_id', 'id', 'name')
"""

from __future__ import annotations

from enum import Enum

import attrs

from tableapi.errors import ValidationError
from tableapi.expressions import Call, Column, Expression, conjuncts, contains_aggregate
from tableapi.plan.base import BinaryNode, PlanNode
from tableapi.plan.relational import Hint
from tableapi.plan.window_join import JoinWindows
from tableapi.types import DataType, Field, RowType, TimeKind


class JoinKind(Enum):
    """A join's kind; the value is Flink's name for it in an optimized plan."""

    INNER = "InnerJoin"
    LEFT = "LeftOuterJoin"
    RIGHT = "RightOuterJoin"
    FULL = "FullOuterJoin"
    SEMI = "LeftSemiJoin"
    ANTI = "LeftAntiJoin"

    @property
    def logical_name(self) -> str:
        """The name in a logical plan (``LogicalJoin(..., joinType=[left])``)."""
        return _LOGICAL_NAMES[self]

    @property
    def keeps_right_columns(self) -> bool:
        return self not in (JoinKind.SEMI, JoinKind.ANTI)

    @property
    def pads_left(self) -> bool:
        """Left columns may be null-padded (right and full outer joins)."""
        return self in (JoinKind.RIGHT, JoinKind.FULL)

    @property
    def pads_right(self) -> bool:
        """Right columns may be null-padded (left and full outer joins)."""
        return self in (JoinKind.LEFT, JoinKind.FULL)


_LOGICAL_NAMES = {
    JoinKind.INNER: "inner",
    JoinKind.LEFT: "left",
    JoinKind.RIGHT: "right",
    JoinKind.FULL: "full",
    JoinKind.SEMI: "left_semi",
    JoinKind.ANTI: "left_anti",
}


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
class Join(BinaryNode):
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
    window: JoinWindows | None = None  # set by the window-join rule

    def derive_row_type(self) -> RowType:
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
            t = self.check_expr(self.condition, combined, "the join condition")
            if t.name not in ("BOOLEAN", "NULL"):
                raise ValidationError(f"A join condition must be BOOLEAN; {self.condition} is {t}.")
        if self.interval is None and self.window is None:
            # A regular join materializes its inputs' rowtimes (Flink's optimizer does): they
            # keep the *ROWTIME* mark of Flink's schema but are no event time downstream, with
            # no watermark to honour (tests/conformance/README.md, difference 14). An interval
            # join's (and a window join's window_time) stay rowtimes: its output's watermark is
            # its inputs'.
            lrow, rrow = _materialized(lrow), _materialized(rrow)
        if not self.kind.keeps_right_columns:
            return lrow
        return RowType(_nullable(lrow, self.kind.pads_left) + _nullable(rrow, self.kind.pads_right))

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        if self.equi_keys is None:
            return ()  # the join-condition rule has not split the condition yet
        return join_unique_keys(self.kind, self.left, self.right, self.equi_keys)


def _materialized(row: RowType) -> RowType:
    if all(f.type.time_kind is not TimeKind.ROWTIME for f in row):
        return row
    return RowType(tuple(Field(f.name, f.type.materialized()) for f in row))


def _versioned_type(t: DataType, nullable: bool) -> DataType:
    t = t.with_nullable(True) if nullable else t
    return t.materialized() if t.time_kind is TimeKind.ROWTIME else t.plain()


def _nullable(row: RowType, padded: bool) -> tuple[Field, ...]:
    if not padded:
        return row.fields
    return tuple(Field(f.name, f.type.with_nullable(True)) for f in row)


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

    def derive_row_type(self) -> RowType:
        if len(self.relations) < 3 or len(self.joins) != len(self.relations) - 1:
            raise ValidationError("internal: a MultiJoin joins 3 or more relations")
        if any(j.kind not in (JoinKind.INNER, JoinKind.LEFT) for j in self.joins):
            raise ValidationError("internal: a MultiJoin joins with INNER and LEFT only")
        return self.joins[-1].row_type

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
class TemporalJoin(BinaryNode):
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

    def derive_row_type(self) -> RowType:
        lrow, rrow = self.left.row_type, self.right.row_type
        if self.kind not in (JoinKind.INNER, JoinKind.LEFT):
            raise ValidationError("A temporal join is an inner or a left outer join.")
        both = [n for n in lrow.names if n in rrow]
        if both:
            raise ValidationError(
                f"Column(s) {both} exist on both sides of the temporal join; rename one side "
                f"first with rename_columns(col(...).alias(...)); left columns: "
                f"[{', '.join(lrow.names)}], right columns: [{', '.join(rrow.names)}]."
            )
        as_of = lrow.field(self.as_of, "the temporal join's as_of")
        if as_of.type.time_kind is TimeKind.MATERIALIZED_ROWTIME:
            raise ValidationError(
                f"as_of must be a time attribute of the left table; {self.as_of} is a rowtime "
                "that a regular join (or a temporal join's versioned side) has materialized: "
                "it has no watermark there. Join with the versioned table before that join, "
                "or make that join an interval join (bounds on both rowtimes)."
            )
        if as_of.type.time_kind is TimeKind.NONE:
            raise ValidationError(
                f"as_of must be a time attribute of the left table (a rowtime with a watermark, "
                f"or PROCTIME()); {self.as_of} is a plain {as_of.type}. Declare "
                f".watermark({self.as_of!r}, ...) or use a PROCTIME() column. Time attributes: "
                f"{[f.name for f in lrow.fields if f.type.time_kind is not TimeKind.NONE]}; "
                f"left columns: [{', '.join(lrow.names)}]."
            )
        if self.right_time is not None:
            rrow.field(self.right_time, "the versioned table's time attribute")
        for k in self.right_key:
            rrow.field(k, "the versioned table's primary key")
        combined = RowType(lrow.fields + rrow.fields)
        t = self.check_expr(self.condition, combined, "the temporal join condition")
        if t.name not in ("BOOLEAN", "NULL"):
            raise ValidationError(f"A join condition must be BOOLEAN; {self.condition} is {t}.")
        equated: set[str] = set()
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
        # The versioned table's rowtime is materialized (Flink's schema keeps its *ROWTIME*
        # mark); the left table's time attributes go on as they are.
        nullable = self.kind is JoinKind.LEFT
        return RowType(
            lrow.fields + tuple(Field(f.name, _versioned_type(f.type, nullable)) for f in rrow)
        )

    @property
    def time(self) -> str:
        """``event`` (versioned table) or ``processing`` (latest row)."""
        return "event" if self.right_time is not None else "processing"

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return self.left.unique_keys  # one version per left row at most
