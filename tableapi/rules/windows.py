"""An aggregation over a window TVF grouped by ``window_start`` and ``window_end`` becomes a
:class:`WindowAggregate` (Flink's StreamPhysicalWindowAggregateRule): the TVF is folded into
the aggregate, which assigns each row its windows itself and emits a window's rows once the
watermark passes its end.

Example::

    >>> from tableapi.plan import Aggregate, ElementsSource, Scan
    >>> from tableapi.plan.windows import Window, WindowKind, WindowTableFunction
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> from tableapi.expressions import col
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> t = Scan("T", ElementsSource(()), RowType.of(("k", BIGINT), ("ts", rowtime)))
    >>> tvf = WindowTableFunction(t, Window(WindowKind.TUMBLE, "ts", 1000))
    >>> agg = Aggregate(tvf, ("window_start", "window_end", "k"), (("n", col("k").count),))
    >>> type(window_aggregates(agg)).__name__
    'WindowAggregate'
"""

from __future__ import annotations

from tableapi.plan import Aggregate, Filter, PlanNode
from tableapi.plan.windows import (
    WINDOW_COLUMNS,
    WINDOW_END,
    WINDOW_START,
    WindowAggregate,
    WindowKind,
    WindowTableFunction,
    partitioned_by_keys,
    sliceable,
)


def push_filters_below_window_tvfs(plan: PlanNode) -> PlanNode:
    """A filter over a TUMBLE, HOP or CUMULATE window TVF that reads none of its window
    columns runs before the TVF (Flink's Calc under its WindowAggregate): the TVF only adds
    columns to each row, so the rows kept are the same, and the aggregate, window join or
    window Top-N over the TVF can fold it in. Not SESSION: a row's session depends on the
    other rows (under a window aggregation, :func:`window_aggregates` folds such filters in,
    as Flink does; on its own the TVF keeps the filter above it).

    >>> from tableapi.plan import ElementsSource, Filter, Scan
    >>> from tableapi.plan.windows import Window, WindowKind, WindowTableFunction
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> from tableapi.expressions import col
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> t = Scan("T", ElementsSource(()), RowType.of(("k", BIGINT), ("ts", rowtime)))
    >>> tvf = WindowTableFunction(t, Window(WindowKind.TUMBLE, "ts", 1000))
    >>> pushed = push_filters_below_window_tvfs(Filter(tvf, col("k") > 1))
    >>> type(pushed).__name__, type(pushed.input).__name__
    ('WindowTableFunction', 'Filter')
    """

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, Filter) or not isinstance(node.input, WindowTableFunction):
            return None
        tvf = node.input
        if tvf.window.kind is WindowKind.SESSION or node.condition.column_names() & set(
            WINDOW_COLUMNS
        ):
            return None
        return WindowTableFunction(
            Filter(tvf.input, node.condition), tvf.window, tvf.under_window_operator
        )

    return plan.transform_up(rewrite)


def window_aggregates(plan: PlanNode) -> PlanNode:
    """Replace each Aggregate over a window TVF that groups by both window bounds."""

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, Aggregate):
            return None
        tvf, filters = _below_filters(node.input)
        if not isinstance(tvf, WindowTableFunction):
            return None
        if not {WINDOW_START, WINDOW_END} <= set(node.group_keys):
            return None  # a plain aggregation of the TVF's rows (batch mode runs it)
        keys = tuple(k for k in node.group_keys if k not in WINDOW_COLUMNS)
        if (
            not sliceable(tvf.window)
            or not partitioned_by_keys(tvf.window, keys)
            or any(a.column_names() & set(WINDOW_COLUMNS) for _, a in node.aggs)
        ):
            return None  # batch mode runs it as it is; streaming refuses the TVF, saying why
        source = tvf.input
        for condition in reversed(filters):
            source = Filter(source, condition)
        return WindowAggregate(source, tvf.window, node.group_keys, node.aggs, node.hints)

    return plan.transform_up(rewrite)


def _below_filters(node: PlanNode) -> tuple[PlanNode, list]:
    """The node under a chain of filters that read no window column, and their conditions
    (top first). Such a filter keeps the same rows before the TVF as after it (a row's
    windows do not depend on the other rows, except SESSION's, whose rows it filters
    before they merge, as Flink does: its Calc runs before the window aggregate), so
    ``GROUP BY window_start, window_end`` over ``WHERE`` over the TVF is a window
    aggregation of the filtered input (Flink's plan: a Calc under the window aggregate)."""
    conditions = []
    while isinstance(node, Filter) and not (node.condition.column_names() & set(WINDOW_COLUMNS)):
        conditions.append(node.condition)
        node = node.input
    return node, conditions
