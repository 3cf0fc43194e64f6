"""A filter on a window Top-N's row number becomes the rank's range (Flink's
FlinkLogicalRankRule: ``rn <= N``, ``rn < N``, ``rn = N``, ``rn > M AND rn <= N``); a window
TVF right under a ranged window Top-N runs stateless in streaming (the rank operator holds
its rows, as Flink's WindowRank holds the TVF's).

Example::

    >>> from tableapi.expressions import col
    >>> from tableapi.plan import ElementsSource, Filter, Project, Scan
    >>> from tableapi.plan.window_rank import WindowRank
    >>> from tableapi.plan.windows import Window, WindowKind, WindowTableFunction
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> t = Scan("T", ElementsSource(()), RowType.of(("k", BIGINT), ("ts", rowtime)))
    >>> tvf = WindowTableFunction(t, Window(WindowKind.TUMBLE, "ts", 10_000))
    >>> rank = WindowRank(tvf, ("window_start", "window_end"), (("k", False),))
    >>> names = rank.row_type.names[:-1] + ("rn",)
    >>> p = Project(rank, tuple(col(n) for n in rank.row_type.names), names)
    >>> out = window_ranks(Filter(p, (col("rn") <= 3) & (col("k") > 0)))
    >>> type(out).__name__, str(out.condition)
    ('Filter', '(k > 0)')
    >>> ranked = out.input.input
    >>> ranked.rank_start, ranked.rank_end, ranked.input.under_window_operator
    (1, 3, True)
"""

from __future__ import annotations

import attrs

from tableapi.expressions import Call, Column, Expression, Literal, and_, conjuncts, lit
from tableapi.plan import Filter, PlanNode, Project
from tableapi.plan.window_rank import WindowRank
from tableapi.plan.windows import WindowTableFunction

#: comparison -> (the same with its sides swapped)
_SWAPPED = {
    "less_than": "greater_than",
    "less_than_or_equal": "greater_than_or_equal",
    "greater_than": "less_than",
    "greater_than_or_equal": "less_than_or_equal",
    "equals": "equals",
}


def _bound(e: Expression, rank: str) -> tuple[str, int] | None:
    """``rank <op> n`` (or ``n <op> rank``) as (op, n) with the rank on the left."""
    if not isinstance(e, Call) or e.name not in _SWAPPED or len(e.args) != 2:
        return None
    a, b = e.args
    if isinstance(b, Column) and b.name == rank:
        a, b, op = b, a, _SWAPPED[e.name]
    else:
        op = e.name
    if not (isinstance(a, Column) and a.name == rank and isinstance(b, Literal)):
        return None
    if isinstance(b.value, bool) or not isinstance(b.value, int):
        return None
    return op, b.value


def rank_range(condition: Expression, rank: str) -> tuple[int, int, list[Expression]] | None:
    """The row numbers ``condition`` keeps of the column ``rank`` (its conjuncts on it), and
    its other conjuncts; None when it sets no upper bound.

    >>> from tableapi.expressions import col
    >>> rank_range((col("rn") > 1) & (col("rn") <= 3), "rn")
    (2, 3, [])
    >>> rank_range(col("rn") < 2, "rn")[:2], rank_range(col("rn") >= 2, "rn")
    ((1, 1), None)
    """
    start, end = 1, None
    rest: list[Expression] = []
    for c in conjuncts(condition):
        bound = _bound(c, rank)
        if bound is None:
            rest.append(c)
            continue
        op, n = bound
        if op in ("less_than", "less_than_or_equal", "equals"):
            high = n - 1 if op == "less_than" else n
            end = high if end is None else min(end, high)
        if op in ("greater_than", "greater_than_or_equal", "equals"):
            start = max(start, n + 1 if op == "greater_than" else n)
    if end is None:
        return None
    return start, end, rest


def _ranked(node: PlanNode, name: str) -> tuple[WindowRank, list[Project]] | None:
    """The unranged window rank under ``node`` (through projections of columns) whose row
    number is ``name`` above, and the projections on the way (top first)."""
    projects: list[Project] = []
    while isinstance(node, Project):
        pairs = dict(zip(node.names, node.exprs, strict=True))
        e = pairs.get(name)
        if not isinstance(e, Column):
            return None
        projects.append(node)
        name, node = e.name, node.input
    if isinstance(node, WindowRank) and node.rank_end is None and node.rank_name == name:
        return node, projects
    return None


def _stateless_tvf(node: PlanNode) -> PlanNode:
    """``node`` with the window TVF right under it (through projections and filters) run
    stateless in streaming (``under_window_operator``: the rank operator keeps its rows)."""
    if isinstance(node, WindowTableFunction):
        return (
            node if node.under_window_operator else attrs.evolve(node, under_window_operator=True)
        )
    if isinstance(node, Project | Filter):
        inner = _stateless_tvf(node.input)
        return node if inner is node.input else node.with_inputs((inner,))
    return node


def window_ranks(plan: PlanNode) -> PlanNode:
    """Fold each filter on a window Top-N's row number into the rank (the module's
    example); any other plan is returned as it is.

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> scan = Scan("T", ElementsSource(()), RowType.of(("a", BIGINT)))
    >>> window_ranks(scan) is scan
    True
    """

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, Filter):
            return None
        for name in node.input.row_type.names:
            found = _ranked(node.input, name)
            if found is None:
                continue
            bounds = rank_range(node.condition, name)
            if bounds is None:
                return None  # no upper bound: not a Top-N (streaming refuses it)
            start, end, rest = bounds
            if start > end:  # no row number: Flink plans an empty Values
                start, end, rest = 1, 1, [lit(False)]
            rank, projects = found
            out: PlanNode = attrs.evolve(
                rank, input=_stateless_tvf(rank.input), rank_start=start, rank_end=end
            )
            for p in reversed(projects):
                out = p.with_inputs((out,))
            return Filter(out, and_(*rest)) if rest else out
        return None

    return _unranked_outputs(plan.transform_up(rewrite))


def _unranked_outputs(plan: PlanNode) -> PlanNode:
    """Flink's "no ranking output": a ranged window rank whose row number no projection or
    filter above reads (``SELECT k, v FROM (SELECT *, ROW_NUMBER() ... AS rn ...) WHERE rn
    <= 3``) leaves it out of its rows.

    >>> from tableapi.expressions import col
    >>> from tableapi.plan import ElementsSource, Filter, Project, Scan
    >>> from tableapi.plan.windows import Window, WindowKind, WindowTableFunction
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> t = Scan("T", ElementsSource(()), RowType.of(("k", BIGINT), ("ts", rowtime)))
    >>> tvf = WindowTableFunction(t, Window(WindowKind.TUMBLE, "ts", 10_000))
    >>> rank = WindowRank(tvf, ("window_start", "window_end"), (("k", False),))
    >>> names = rank.row_type.names[:-1] + ("rn",)
    >>> inner = Project(rank, tuple(col(n) for n in rank.row_type.names), names)
    >>> out = window_ranks(Project(Filter(inner, col("rn") <= 3), (col("k"),), ("k",)))
    >>> out.input.input.output_rank, out.input.row_type.names
    (False, ('k', 'ts', 'window_start', 'window_end', 'window_time'))
    """

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, Project):
            return None
        below = node.input
        used = {c for e in node.exprs for c in e.column_names()}
        if isinstance(below, Filter):
            used |= below.condition.column_names()
            below = below.input
        if not isinstance(below, Project) or not isinstance(below.input, WindowRank):
            return None
        rank = below.input
        if not rank.output_rank or rank.rank_end is None:
            return None
        pairs = list(zip(below.exprs, below.names, strict=True))
        reads = [n for e, n in pairs if rank.rank_name in e.column_names()]
        if any(not isinstance(e, Column) for e, n in pairs if n in reads) or used & set(reads):
            return None  # the row number is computed with, or read above
        kept = [(e, n) for e, n in pairs if n not in reads]
        inner = Project(
            attrs.evolve(rank, output_rank=False),
            tuple(e for e, _ in kept),
            tuple(n for _, n in kept),
        )
        if isinstance(node.input, Filter):
            return node.with_inputs((node.input.with_inputs((inner,)),))
        return node.with_inputs((inner,))

    return plan.transform_up(rewrite)


__all__ = ["rank_range", "window_ranks"]
