"""Window Top-N and window deduplication (Flink's WindowRank and WindowDeduplicate):
``ROW_NUMBER() OVER (PARTITION BY window_start, window_end[, keys] ORDER BY ...)`` over a
window TVF's rows or a window aggregation's, kept to a range of row numbers (``WHERE rn <=
N``, folded in by ``tableapi/rules/window_ranks.py``). Each window's rows of a partition are
numbered once the watermark passes the window's end; the output is insert-only.

Example::

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.plan.windows import Window, WindowKind, WindowTableFunction
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> t = Scan("T", ElementsSource(()), RowType.of(("k", BIGINT), ("ts", rowtime)))
    >>> tvf = WindowTableFunction(t, Window(WindowKind.TUMBLE, "ts", 10_000))
    >>> rank = WindowRank(tvf, ("window_start", "window_end"), (("k", False),), 1, 3)
    >>> rank.row_type.names[-1], rank.keys, rank.deduplicate
    ('w0$o0', (), False)
"""

from __future__ import annotations

import attrs

from tableapi.errors import ValidationError
from tableapi.expressions import Column
from tableapi.plan.base import PlanNode, UnaryNode
from tableapi.plan.relational import Aggregate, Filter, Project
from tableapi.plan.windows import (
    WINDOW_END,
    WINDOW_START,
    Window,
    WindowAggregate,
    WindowTableFunction,
)
from tableapi.types import BIGINT, Field, RowType

#: The row number's column (Flink's name for the first OVER call of a block).
RANK_COLUMN = "w0$o0"


def windowed_input(node: PlanNode) -> tuple[Window, dict[str, str], bool] | None:
    """``node``'s windows if its rows are a window TVF's or a window aggregation's (through
    projections of columns, filters and window ranks): the window, which of its columns are
    the window's bounds (column -> ``window_start`` / ``window_end``) and whether the rows
    come straight from a window TVF (False: from a window aggregation or a window rank, which
    emit a window's rows once the window has ended). None when ``node`` is not windowed.

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.plan.windows import WindowKind
    >>> from tableapi.expressions import Column
    >>> from tableapi.types import DataType, RowType, TimeKind
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> scan = Scan("T", ElementsSource(()), RowType.of(("ts", rowtime),))
    >>> tvf = WindowTableFunction(scan, Window(WindowKind.TUMBLE, "ts", 1000))
    >>> found = windowed_input(Project(tvf, (Column("window_end"),), ("we",)))
    >>> found[1], found[2]
    ({'we': 'window_end'}, True)
    """
    renames: list[dict[str, str]] = []  # per projection: its output column -> its input's
    ranked = False  # through a window rank: its rows come when their windows have ended
    while True:
        if isinstance(node, WindowTableFunction):
            window, tvf = node.window, not ranked
            break
        if isinstance(node, WindowAggregate):
            window, tvf = node.window, False
            break
        if isinstance(node, Aggregate) and isinstance(node.input, WindowTableFunction):
            if not {WINDOW_START, WINDOW_END} <= set(node.group_keys):
                return None
            window, tvf = node.input.window, False
            break
        if isinstance(node, Project):
            pairs = zip(node.exprs, node.names, strict=True)
            renames.append({n: e.name for e, n in pairs if isinstance(e, Column)})
        elif isinstance(node, WindowRank):  # it keeps its input's columns
            ranked = True
        elif not isinstance(node, Filter):
            return None
        node = node.input
    return window, _follow({WINDOW_START: WINDOW_START, WINDOW_END: WINDOW_END}, renames), tvf


def _follow(bounds: dict[str, str], renames: list[dict[str, str]]) -> dict[str, str]:
    """The names the bound columns (bound -> its column at the bottom) have above the
    projections ``renames`` (top first): column -> bound."""
    found: dict[str, str] = {}
    for bound, column in bounds.items():
        names = {column: column}  # a column below -> its name above
        for mapping in reversed(renames):
            names = {out: names[src] for out, src in mapping.items() if src in names}
        found.update({name: bound for name in names})
    return found


@attrs.frozen(eq=False)
class WindowRank(UnaryNode):
    """``ROW_NUMBER() OVER (PARTITION BY partition ORDER BY order)`` per window of a windowed
    input, kept to the row numbers ``rank_start..rank_end`` (``rank_end`` None: every row,
    before the rule folds the filter in; only batch mode runs that). ``partition`` holds the
    input's ``window_start`` and ``window_end`` columns; ``order`` is ``(column,
    ascending)`` pairs. The row number is the last column, ``rank_name``, when
    ``output_rank``."""

    partition: tuple[str, ...]
    order: tuple[tuple[str, bool], ...]
    rank_start: int = 1
    rank_end: int | None = None
    rank_name: str = RANK_COLUMN
    output_rank: bool = True

    def derive_row_type(self) -> RowType:
        row = self.input.row_type
        for c in self.partition:
            row.field(c, "ROW_NUMBER() OVER (PARTITION BY ...)")
        for c, _ in self.order:
            row.field(c, "ROW_NUMBER() OVER (... ORDER BY ...)")
        if not self.order:
            raise ValidationError(
                "ROW_NUMBER() OVER (PARTITION BY ...) needs an ORDER BY: a window Top-N "
                "orders each window's rows (ORDER BY c [ASC|DESC], ...)."
            )
        found = windowed_input(self.input)
        bounds = set() if found is None else {found[1].get(c) for c in self.partition}
        if found is None or not {WINDOW_START, WINDOW_END} <= bounds:
            raise ValidationError(
                "A window Top-N partitions a window TVF's or a window aggregation's rows by "
                "both window_start and window_end (PARTITION BY window_start, window_end, "
                f"...); PARTITION BY [{', '.join(self.partition)}] over this input is a "
                "Top-N, which is not supported yet."
            )
        if self.rank_start < 1 or (self.rank_end is not None and self.rank_end < self.rank_start):
            raise ValidationError(
                f"A window Top-N's row numbers run from 1: rank range [{self.rank_start}, "
                f"{self.rank_end}] is empty. Filter with rn <= N (N >= 1)."
            )
        if self.rank_name in row:
            raise ValidationError(f"internal: the row number's column {self.rank_name} exists")
        if not self.output_rank:
            return row
        return RowType((*row, Field(self.rank_name, BIGINT.with_nullable(False))))

    @property
    def window(self) -> Window:
        """The input's windows."""
        found = windowed_input(self.input)
        assert found is not None
        return found[0]

    @property
    def bounds(self) -> tuple[str, str]:
        """The input's ``(window_start, window_end)`` columns among the partition keys."""
        found = windowed_input(self.input)
        assert found is not None
        by_bound = {found[1][c]: c for c in self.partition if c in found[1]}
        return by_bound[WINDOW_START], by_bound[WINDOW_END]

    @property
    def over_tvf(self) -> bool:
        """Over a window TVF's rows (not a window aggregation's)."""
        found = windowed_input(self.input)
        return found is not None and found[2]

    @property
    def keys(self) -> tuple[str, ...]:
        """The partition keys other than the window bounds (the operator's grouping key)."""
        bounds = self.bounds
        return tuple(c for c in self.partition if c not in bounds)

    @property
    def deduplicate(self) -> bool:
        """Flink's WindowDeduplicate: the first row number only, ordered by the window TVF's
        time column alone (ASC keeps the first row, DESC the last)."""
        if (self.rank_start, self.rank_end) != (1, 1) or len(self.order) != 1:
            return False
        found = windowed_input(self.input)
        if found is None or not found[2]:
            return False
        return self.order[0][0] == found[0].time_col

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        if self.output_rank:
            return ((*self.partition, self.rank_name),)
        return (self.partition,) if self.rank_end == self.rank_start else ()


def window_rank_text(node: WindowRank) -> str:
    """Flink's WindowRank / WindowDeduplicate line (the window named by its bound columns).

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.plan.windows import WindowKind
    >>> from tableapi.types import DataType, TimeKind
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> t = Scan("T", ElementsSource(()), RowType.of(("k", BIGINT), ("ts", rowtime)))
    >>> tvf = WindowTableFunction(t, Window(WindowKind.TUMBLE, "ts", 10_000))
    >>> window_rank_text(WindowRank(tvf, ("window_start", "window_end", "k"), (("ts", False),),
    ...                             1, 1))
    'WindowDeduplicate(window=[TUMBLE(win_start=[window_start], win_end=[window_end], \
size=[10 s])], keep=[LastRow], partitionKeys=[k], orderKey=[ts], order=[ROWTIME])'
    """
    window = node.window
    start, end = node.bounds
    text = str(window).replace(
        f"time_col=[{window.time_col}]", f"win_start=[{start}], win_end=[{end}]", 1
    )
    keys = ", ".join(node.keys)
    if node.deduplicate:
        column, ascending = node.order[0]
        keep = "FirstRow" if ascending else "LastRow"
        return (
            f"WindowDeduplicate(window=[{text}], keep=[{keep}], partitionKeys=[{keys}], "
            f"orderKey=[{column}], order=[ROWTIME])"
        )
    order = ", ".join(f"{c} {'ASC' if asc else 'DESC'}" for c, asc in node.order)
    return (
        f"WindowRank(window=[{text}], rankType=[ROW_NUMBER], rankRange=[rankStart="
        f"{node.rank_start}, rankEnd={node.rank_end}], partitionBy=[{keys}], orderBy=[{order}], "
        f"select=[{', '.join(node.row_type.names)}])"
    )


def logical_window_rank_text(node: WindowRank) -> str:
    """The logical plan's line: the input's columns and the row number (Flink's
    LogicalProject with ``ROW_NUMBER() OVER (...)``).

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.plan.windows import WindowKind
    >>> from tableapi.types import DataType, TimeKind
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> t = Scan("T", ElementsSource(()), RowType.of(("k", BIGINT), ("ts", rowtime)))
    >>> tvf = WindowTableFunction(t, Window(WindowKind.TUMBLE, "ts", 10_000))
    >>> logical_window_rank_text(WindowRank(tvf, ("window_start", "window_end"), (("k", True),)))
    'LogicalProject(inputs=[0..4], exprs=[[ROW_NUMBER() OVER (PARTITION BY window_start, \
window_end ORDER BY k ASC) AS w0$o0]])'
    """
    order = ", ".join(f"{c} {'ASC' if asc else 'DESC'}" for c, asc in node.order)
    over = f"ROW_NUMBER() OVER (PARTITION BY {', '.join(node.partition)} ORDER BY {order})"
    last = len(node.input.row_type) - 1
    return f"LogicalProject(inputs=[0..{last}], exprs=[[{over} AS {node.rank_name}]])"


__all__ = [
    "RANK_COLUMN",
    "WindowRank",
    "logical_window_rank_text",
    "window_rank_text",
    "windowed_input",
]
