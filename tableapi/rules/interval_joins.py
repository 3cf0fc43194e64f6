"""Classify joins whose condition bounds one side's rowtime by the other's as interval joins.

``o_rowtime BETWEEN s_rowtime - INTERVAL '4' HOUR AND s_rowtime`` (or a pair of ``>=``/``<=``,
``>``/``<``) plus at least one equi key makes an inner/left/right/full join an interval
(time-windowed) join: Flink's ``windowBounds`` are the bounds of ``left.t - right.t``.

Example::

    >>> from tableapi.expressions import col, lit
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> orders = RowType.of(("o_id", BIGINT), ("o_t", rowtime))
    >>> shipments = RowType.of(("s_id", BIGINT), ("s_t", rowtime))
    >>> bounds_of(col("o_t").between(col("s_t") - lit(4).hours, col("s_t")), orders, shipments)
    IntervalBounds(left_time='o_t', right_time='s_t', lower_ms=-14400000, upper_ms=0)
"""

from __future__ import annotations

import datetime as dt

import attrs

from tableapi.expressions import Call, Column, Expression, Literal, and_, conjuncts
from tableapi.plan import EquiKey, IntervalBounds, Join, JoinKind, PlanNode
from tableapi.types import RowType, TimeKind

_INTERVAL_KINDS = (JoinKind.INNER, JoinKind.LEFT, JoinKind.RIGHT, JoinKind.FULL)
# comparison -> (bound it gives on left.t - right.t when the left time is on the left side,
#                adjustment in ms for a strict comparison)
_BOUNDS = {
    "greater_than_or_equal": ("lower", 0),
    "greater_than": ("lower", 1),
    "less_than_or_equal": ("upper", 0),
    "less_than": ("upper", -1),
}
_FLIPPED = {
    "greater_than_or_equal": "less_than_or_equal",
    "greater_than": "less_than",
    "less_than_or_equal": "greater_than_or_equal",
    "less_than": "greater_than",
}


def classify_interval_joins(plan: PlanNode) -> PlanNode:
    """Mark joins with rowtime bounds on both sides (and an equi key) as interval joins."""

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, Join) or node.kind not in _INTERVAL_KINDS:
            return None
        if not node.equi_keys or node.residual is None or node.interval is not None:
            return None
        lrow, rrow = node.left.row_type, node.right.row_type
        bounds = bounds_of(node.residual, lrow, rrow)
        if bounds is None:
            return None
        # An equality of the two rowtimes stays in the residual: as a join key its column
        # would carry a watermark beside the operator's own event time, which Spark refuses
        # (MULTIPLE_EVENT_TIME_COLUMNS; tests/conformance/README.md, difference 18).
        times = [
            k for k in node.equi_keys if _is_rowtime(k.left, lrow) and _is_rowtime(k.right, rrow)
        ]
        keys = tuple(k for k in node.equi_keys if k not in times)
        if not keys:
            return attrs.evolve(node, interval=bounds)
        residual = and_(*(_as_term(k) for k in times), node.residual)
        return attrs.evolve(node, interval=bounds, equi_keys=keys, residual=residual)

    return plan.transform_up(rewrite)


def _as_term(key: EquiKey) -> Expression:
    name = "is_not_distinct_from" if key.null_safe else "equals"
    return Call(name, (Column(key.left), Column(key.right)))


def bounds_of(condition: Expression, left: RowType, right: RowType) -> IntervalBounds | None:
    """The interval bounds in ``condition`` (a lower and an upper one on the same pair of
    rowtime attributes), or None."""
    found: dict[tuple[str, str], dict[str, int]] = {}
    for term in conjuncts(condition):
        for op, a, b in _comparisons(term):
            bound = _bound(op, a, b, left, right)
            if bound is not None:
                (lt, rt), which, ms = bound
                pair = found.setdefault((lt, rt), {})
                # Several bounds of one kind: the tightest one holds.
                pick = max if which == "lower" else min
                pair[which] = pick(pair[which], ms) if which in pair else ms
    for (lt, rt), pair in found.items():
        if "lower" in pair and "upper" in pair:
            return IntervalBounds(lt, rt, pair["lower"], pair["upper"])
    return None


def _comparisons(term: Expression) -> list[tuple[str, Expression, Expression]]:
    if not isinstance(term, Call):
        return []
    if term.name == "between":
        value, low, high = term.args
        return [("greater_than_or_equal", value, low), ("less_than_or_equal", value, high)]
    if term.name in _BOUNDS:
        return [(term.name, term.args[0], term.args[1])]
    return []


def _bound(
    op: str, a: Expression, b: Expression, left: RowType, right: RowType
) -> tuple[tuple[str, str], str, int] | None:
    """``a op b`` as a bound on ``left.t - right.t``: ((left_t, right_t), lower|upper, ms)."""
    ta, tb = _time_plus_offset(a), _time_plus_offset(b)
    if ta is None or tb is None:
        return None
    (ca, oa), (cb, ob) = ta, tb
    if _is_rowtime(ca, left) and _is_rowtime(cb, right):
        pass
    elif _is_rowtime(cb, left) and _is_rowtime(ca, right):
        (ca, oa), (cb, ob), op = (cb, ob), (ca, oa), _FLIPPED[op]
    else:
        return None
    # ca + oa  op  cb + ob   <=>   ca - cb  op  ob - oa
    which, strict = _BOUNDS[op]
    return (ca, cb), which, ob - oa + strict


def _time_plus_offset(e: Expression) -> tuple[str, int] | None:
    """``col`` -> (col, 0); ``col +/- INTERVAL`` -> (col, +/-ms); else None."""
    if isinstance(e, Column):
        return e.name, 0
    if isinstance(e, Call) and e.name in ("plus", "minus") and isinstance(e.args[0], Column):
        value = e.args[1]
        if isinstance(value, Literal) and isinstance(value.value, dt.timedelta):
            ms = int(value.value.total_seconds() * 1000)
            return e.args[0].name, ms if e.name == "plus" else -ms
    return None


def _is_rowtime(name: str, row: RowType) -> bool:
    return name in row and row.field(name).type.time_kind is TimeKind.ROWTIME
