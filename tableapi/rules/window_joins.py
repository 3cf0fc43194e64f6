"""A join of two window TVFs' rows equated on both sides' ``window_start`` and ``window_end``
is a window join (Flink's StreamPhysicalWindowJoinRule): the rule marks the ``Join`` with its
:class:`~tableapi.plan.window_join.JoinWindows`. As in Flink, a join that misses one of the
two equalities, or whose sides run different windows, stays a regular join.

Each side is followed from the join down through projections (of columns) and filters to
its window TVF; a side that reaches anything else (a join, an aggregation) is not windowed.

Example::

    >>> from tableapi.plan import ElementsSource, Join, JoinKind, Project, Scan
    >>> from tableapi.plan.windows import Window, WindowKind, WindowTableFunction
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> from tableapi.expressions import col
    >>> from tableapi.rules import optimize
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> def tvf(name: str) -> WindowTableFunction:
    ...     scan = Scan(name, ElementsSource(()), RowType.of(("k", BIGINT), ("ts", rowtime)))
    ...     return WindowTableFunction(scan, Window(WindowKind.TUMBLE, "ts", 5000))
    >>> r = tvf("R")
    >>> names = r.row_type.names
    >>> r = Project(r, tuple(col(n) for n in names), tuple("r_" + n for n in names))
    >>> on = ((col("window_start") == col("r_window_start"))
    ...       & (col("window_end") == col("r_window_end")) & (col("k") == col("r_k")))
    >>> join = optimize(Join(tvf("L"), r, JoinKind.INNER, on)).plan
    >>> join.window.right_bounds
    ('r_window_start', 'r_window_end')
"""

from __future__ import annotations

import attrs

from tableapi.expressions import Column
from tableapi.plan import Filter, Join, PlanNode, Project
from tableapi.plan.window_join import JoinWindows, same_windows
from tableapi.plan.windows import WINDOW_END, WINDOW_START, Window, WindowTableFunction


def window_bounds(node: PlanNode) -> tuple[Window, dict[str, str]] | None:
    """``node``'s window TVF and which of its columns are the window's bounds (column ->
    ``window_start`` / ``window_end``), followed down through projections and filters; None
    when ``node`` is not a window TVF's rows.

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.plan.windows import WindowKind
    >>> from tableapi.types import DataType, RowType, TimeKind
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> scan = Scan("T", ElementsSource(()), RowType.of(("ts", rowtime),))
    >>> tvf = WindowTableFunction(scan, Window(WindowKind.TUMBLE, "ts", 1000))
    >>> window_bounds(Project(tvf, (Column("window_end"),), ("we",)))[1]
    {'we': 'window_end'}
    """
    renames: list[dict[str, str]] = []  # per projection: its output column -> its input's
    while not isinstance(node, WindowTableFunction):
        if isinstance(node, Project):
            pairs = zip(node.exprs, node.names, strict=True)
            renames.append({n: e.name for e, n in pairs if isinstance(e, Column)})
        elif not isinstance(node, Filter):
            return None
        node = node.input
    found: dict[str, str] = {}
    for bound in (WINDOW_START, WINDOW_END):
        names = {bound: bound}  # an input column -> the name it has above
        for mapping in reversed(renames):
            names = {out: names[src] for out, src in mapping.items() if src in names}
        found.update({name: bound for name in names})
    return node.window, found


def _joined(side: PlanNode) -> PlanNode:
    """``side`` with its window TVF marked as a window join's input (streaming runs it)."""

    def mark(node: PlanNode) -> PlanNode | None:
        if isinstance(node, WindowTableFunction) and not node.under_window_operator:
            return attrs.evolve(node, under_window_operator=True)
        return None

    return side.transform_up(mark)


def window_joins(plan: PlanNode) -> PlanNode:
    """Mark each join of two window TVFs equated on both window bounds as a window join
    (the module's example); any other plan is returned as it is.

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> scan = Scan("T", ElementsSource(()), RowType.of(("a", BIGINT)))
    >>> window_joins(scan) is scan
    True
    """

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, Join) or node.equi_keys is None or node.window is not None:
            return None
        if node.interval is not None:
            return None
        left, right = window_bounds(node.left), window_bounds(node.right)
        if left is None or right is None or not same_windows(left[0], right[0]):
            return None  # Flink: a regular join
        bounds: dict[str, tuple[str, str]] = {}
        for key in node.equi_keys:
            lb, rb = left[1].get(key.left), right[1].get(key.right)
            if lb is not None and lb == rb and not key.null_safe:
                bounds.setdefault(lb, (key.left, key.right))
        if set(bounds) != {WINDOW_START, WINDOW_END}:
            return None  # Flink: a regular join
        (ls, rs), (le, re) = bounds[WINDOW_START], bounds[WINDOW_END]
        return attrs.evolve(
            node,
            left=_joined(node.left),
            right=_joined(node.right),
            window=JoinWindows(left[0], right[0], (ls, le), (rs, re)),
        )

    return plan.transform_up(rewrite)


__all__ = ["window_bounds", "window_joins"]
