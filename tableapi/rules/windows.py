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
    WindowTableFunction,
    partitioned_by_keys,
    sliceable,
)


def push_filters_below_window_tvfs(plan: PlanNode) -> PlanNode:
    """A filter over a window TVF that reads none of its window columns runs before the TVF
    (Flink's Calc under its WindowAggregate): the TVF only adds columns, so the rows kept
    are the same, and the aggregate or window join over the TVF can fold it in.

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
        if node.condition.column_names() & set(WINDOW_COLUMNS):
            return None
        tvf = node.input
        return WindowTableFunction(Filter(tvf.input, node.condition), tvf.window, tvf.joined)

    return plan.transform_up(rewrite)


def window_aggregates(plan: PlanNode) -> PlanNode:
    """Replace each Aggregate over a window TVF that groups by both window bounds."""

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, Aggregate) or not isinstance(node.input, WindowTableFunction):
            return None
        if not {WINDOW_START, WINDOW_END} <= set(node.group_keys):
            return None  # a plain aggregation of the TVF's rows (batch mode runs it)
        tvf = node.input
        keys = tuple(k for k in node.group_keys if k not in WINDOW_COLUMNS)
        if (
            not sliceable(tvf.window)
            or not partitioned_by_keys(tvf.window, keys)
            or any(a.column_names() & set(WINDOW_COLUMNS) for _, a in node.aggs)
        ):
            return None  # batch mode runs it as it is; streaming refuses the TVF, saying why
        return WindowAggregate(tvf.input, tvf.window, node.group_keys, node.aggs, node.hints)

    return plan.transform_up(rewrite)
