"""Flink-style plan text for ``Table.explain()``.

Example output::

    Join(joinType=[InnerJoin], where=[(product_id = id)], select=[order_id, product_id, id],
         leftInputSpec=[NoUniqueKey], rightInputSpec=[JoinKeyContainsUniqueKey])
    :- TableSourceScan(table=[[default_catalog, default_database, Orders]], fields=[...])
    +- TableSourceScan(table=[[default_catalog, default_database, Product]], fields=[...])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from tableapi.catalog import ObjectIdentifier
from tableapi.expressions import Column, and_
from tableapi.plan.base import PlanNode
from tableapi.plan.changelog import input_spec
from tableapi.plan.joins import Join, MultiJoin, TemporalJoin
from tableapi.plan.lookup import LookupJoin
from tableapi.plan.relational import (
    Aggregate,
    Distinct,
    Exchange,
    Filter,
    Limit,
    Project,
    QueryHints,
    Sort,
    Union,
)
from tableapi.plan.sources import Scan
from tableapi.plan.window_rank import WindowRank, logical_window_rank_text, window_rank_text
from tableapi.plan.windows import WINDOW_COLUMNS, WindowAggregate, WindowTableFunction

__all__ = ["input_spec", "join_text", "logical_text", "optimized_text", "render", "render_tree"]


def _table(name: str) -> str:
    return f"table=[{ObjectIdentifier.of(name).to_list()}]"


def _list(items: Any) -> str:
    return "[" + ", ".join(str(i) for i in items) + "]"


def _logical_project(node: Project) -> str:
    cols = ", ".join(f"{n}=[{e}]" for e, n in zip(node.exprs, node.names, strict=True))
    return f"LogicalProject({cols})"


def _logical_aggregate(node: Aggregate) -> str:
    aggs = "".join(f", {n}=[{a}]" for n, a in node.aggs)
    return f"LogicalAggregate(group=[{{{', '.join(node.group_keys)}}}]{aggs})"


def _logical_join(node: Join) -> str:
    cond = "true" if node.condition is None else node.condition
    return f"LogicalJoin(condition=[{cond}], joinType=[{node.kind.logical_name}])"


def _logical_temporal_join(node: TemporalJoin) -> str:
    return (
        f"LogicalJoin(condition=[{node.condition}], joinType=[{node.kind.logical_name}], "
        f"forSystemTimeAsOf=[{node.as_of}])"
    )


def _logical_lookup_join(node: LookupJoin) -> str:
    return (
        f"LogicalCorrelate(condition=[{node.condition}], "
        f"joinType=[{node.kind.logical_name}], forSystemTimeAsOf=[{node.as_of}], "
        f"{_table(node.table_name)})"
    )


#: Logical node type -> its line in the Abstract Syntax Tree (a node without one: its name).
_LOGICAL: dict[type, Callable[[Any], str]] = {
    Scan: lambda n: f"LogicalTableScan({_table(n.table_name)})",
    Project: _logical_project,
    Filter: lambda n: f"LogicalFilter(condition=[{n.condition}])",
    Aggregate: _logical_aggregate,
    Join: _logical_join,
    TemporalJoin: _logical_temporal_join,
    LookupJoin: _logical_lookup_join,
    Exchange: lambda n: _exchange(n),
    Distinct: lambda n: f"LogicalAggregate(group=[{{{', '.join(n.row_type.names)}}}])",
    Sort: lambda n: f"LogicalSort(sort=[{', '.join(map(str, n.keys))}])",
    Limit: lambda n: f"LogicalSort(offset=[{n.offset}], fetch=[{n.fetch}])",
    Union: lambda n: f"LogicalUnion(all=[{str(not n.distinct).lower()}])",
    QueryHints: lambda n: f"LogicalHints(hints=[{', '.join(map(str, n.hints))}])",
    WindowTableFunction: lambda n: (
        f"LogicalTableFunctionScan(invocation=[{n.window}], rowType={_list(n.row_type.names)})"
    ),
    WindowRank: logical_window_rank_text,
}


def logical_text(node: PlanNode) -> str:
    """``node``'s line in the Abstract Syntax Tree.

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> logical_text(Scan("T", ElementsSource(()), RowType.of(("a", BIGINT))))
    'LogicalTableScan(table=[[default_catalog, default_database, T]])'
    """
    text = _LOGICAL.get(type(node))
    return type(node).__name__ if text is None else text(node)


def _calc_project(node: Project) -> str:
    cols = [
        str(e) if getattr(e, "name", None) == n else f"{e} AS {n}"
        for e, n in zip(node.exprs, node.names, strict=True)
    ]
    return f"Calc(select={_list(cols)})"


def _group_aggregate(node: Aggregate) -> str:
    sel = list(node.group_keys) + [f"{a} AS {n}" for n, a in node.aggs]
    group_by = f"groupBy={_list(node.group_keys)}, " if node.group_keys else ""
    return f"GroupAggregate({group_by}select={_list(sel)})"


def _window_aggregate(node: WindowAggregate) -> str:
    """Flink's WindowAggregate: the keys, the window, then the calls and the window
    properties (``start('w$)``) it selects."""
    props = {"window_start": "start", "window_end": "end", "window_time": "rowtime"}
    sel = [*node.keys, *(f"{a} AS {n}" for n, a in node.aggs)]
    sel += [f"{props[k]}('w$) AS {k}" for k in node.group_keys if k in WINDOW_COLUMNS]
    group_by = f"groupBy={_list(node.keys)}, " if node.keys else ""
    return f"WindowAggregate({group_by}window=[{node.window}], select={_list(sel)})"


#: Node type -> its line in the optimized plan (a node without one: its logical line).
_OPTIMIZED: dict[type, Callable[[Any], str]] = {
    Scan: lambda n: f"TableSourceScan({_table(n.table_name)}, fields={_list(n.row_type.names)})",
    Project: _calc_project,
    Filter: lambda n: f"Calc(select={_list(n.row_type.names)}, where=[{n.condition}])",
    Aggregate: _group_aggregate,
    Join: lambda n: join_text(n),
    TemporalJoin: lambda n: _temporal_join(n),
    MultiJoin: lambda n: _multi_join(n),
    LookupJoin: lambda n: _lookup_join(n),
    Exchange: lambda n: _exchange(n),
    Distinct: lambda n: (
        f"GroupAggregate(groupBy={_list(n.row_type.names)}, select={_list(n.row_type.names)})"
    ),
    Sort: lambda n: f"Sort(orderBy={_list(n.keys)})",
    Limit: lambda n: f"Limit(offset=[{n.offset}], fetch=[{n.fetch}])",
    Union: lambda n: f"Union(all=[{str(not n.distinct).lower()}], union={_list(n.row_type.names)})",
    WindowTableFunction: lambda n: f"WindowTableFunction(window=[{n.window}])",
    WindowAggregate: _window_aggregate,
    WindowRank: window_rank_text,
}


def optimized_text(node: PlanNode) -> str:
    """``node``'s line in the optimized plan (batch mode's, and the start of a streaming exec
    node's).

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> optimized_text(Scan("T", ElementsSource(()), RowType.of(("a", BIGINT))))
    'TableSourceScan(table=[[default_catalog, default_database, T]], fields=[a])'
    """
    text = _OPTIMIZED.get(type(node))
    return logical_text(node) if text is None else text(node)


def join_text(node: Join, input_specs: tuple[str, str] | None = None) -> str:
    """A join's line in the optimized plan; ``input_specs``: the state layouts of its inputs
    where the physical plan holds them (else derived here, for batch mode's text).

    >>> from tableapi.plan import ElementsSource, JoinKind, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> from tableapi.expressions import col
    >>> from tableapi.rules import optimize
    >>> a = Scan("A", ElementsSource(()), RowType.of(("a", BIGINT)))
    >>> b = Scan("B", ElementsSource(()), RowType.of(("b", BIGINT)))
    >>> join = optimize(Join(a, b, JoinKind.INNER, col("a") == col("b"))).plan
    >>> join_text(join, ("HasUniqueKey", "NoUniqueKey")).split(", leftInputSpec")[1]
    '=[HasUniqueKey], rightInputSpec=[NoUniqueKey])'
    """
    if node.window is not None:
        return window_join_text(node)
    keys = node.equi_keys or ()
    where = node.condition if node.condition is not None else "true"
    parts = [
        f"joinType=[{node.kind.value}]",
        f"where=[{where}]",
        f"select={_list(node.row_type.names)}",
    ]
    if keys:
        left_keys = tuple(k.left for k in keys)
        right_keys = tuple(k.right for k in keys)
        parts.append(f"leftKeys={_list(left_keys)}, rightKeys={_list(right_keys)}")
        left_spec, right_spec = input_specs or (
            input_spec(node.left, left_keys),
            input_spec(node.right, right_keys),
        )
        parts.append(f"leftInputSpec=[{left_spec}]")
        parts.append(f"rightInputSpec=[{right_spec}]")
    else:
        parts.append("equiKeys=[] (no equi key: a single partition joins all rows)")
    if node.residual is not None and keys:
        parts.append(f"nonEquiCondition=[{node.residual}]")
    if node.hints:
        parts.append(
            "hints=["
            + ", ".join(f"[{h.name} {side}:{h.tables[0]}]" for h, side in node.hints)
            + "]"
        )
    if node.interval is not None:
        b = node.interval
        lrow, rrow = node.left.row_type, node.right.row_type
        parts.insert(
            1,
            f"windowBounds=[isRowTime=true, leftLowerBound={b.lower_ms}, "
            f"leftUpperBound={b.upper_ms}, leftTimeIndex={lrow.index(b.left_time)}, "
            f"rightTimeIndex={rrow.index(b.right_time)}]",
        )
        return f"IntervalJoin({', '.join(parts)})"
    return f"Join({', '.join(parts)})"


def window_join_text(node: Join) -> str:
    """Flink's WindowJoin line: both windows, the kind, the condition without the window
    bounds' equalities, the columns.

    >>> from tableapi.physical.window_join import _example
    >>> window_join_text(_example("FULL").join).split("], joinType")[1][:40]
    '=[FullOuterJoin], where=[(k = k0)], sele'
    """
    assert node.window is not None
    bounds = node.window.bound_columns
    terms: list[Any] = [
        Column(k.left).is_not_distinct_from(Column(k.right)) if k.null_safe
        else Column(k.left) == Column(k.right)
        for k in node.equi_keys or ()
        if k.left not in bounds
    ]  # fmt: skip
    if node.residual is not None:
        terms.append(node.residual)
    where = and_(*terms) if terms else "true"
    return (
        f"WindowJoin(leftWindow=[{node.window.explain_window('left')}], "
        f"rightWindow=[{node.window.explain_window('right')}], joinType=[{node.kind.value}], "
        f"where=[{where}], select={_list(node.row_type.names)})"
    )


def _exchange(node: Exchange) -> str:
    return f"Exchange(distribution=[hash[{', '.join(map(str, node.keys))}]])"


def _lookup_join(node: LookupJoin) -> str:
    """Flink's LookupJoin: the table, the lookup keys (``column=probe expression``), the
    calc on the fetched rows (``where``), a left join's pre-filter, the remaining join
    condition, and the hints' effects; plus the table's cache."""
    lookup = node.lookup
    parts = [
        f"table=[{node.qualified_name}]",
        f"joinType=[{node.kind.value}]",
        f"lookup=[{', '.join(map(str, lookup.keys))}]",
    ]
    if lookup.dim_filter is not None:
        parts.append(f"where=[{lookup.dim_filter}]")
    if lookup.pre_filter is not None:
        parts.append(f"preFilterCondition=[{lookup.pre_filter}]")
    if lookup.residual is not None:
        parts.append(f"joinCondition=[{lookup.residual}]")
    parts.append(f"select={_list(node.row_type.names)}")
    hint = node.lookup_hint
    if hint is not None and hint.async_lookup:
        parts.append(f"async=[{hint.output_mode.upper()}, {hint.capacity}, {hint.timeout_ms}ms]")
    retry = hint.retry_spec() if hint is not None else None
    if retry is not None:
        parts.append(
            f"retry=[lookup_miss, FIXED_DELAY, {retry.fixed_delay_ms}ms, {retry.max_attempts}]"
        )
    if node.shuffle:
        parts.append("shuffle=[true]")
    parts.append(f"cache=[{_cache(node)}]")
    return f"LookupJoin({', '.join(parts)})"


def _cache(node: LookupJoin) -> str:
    c = node.source.cache
    if c.kind == "PARTIAL":
        bits = [
            f"maxRows={c.max_rows}" if c.max_rows else "",
            f"expireAfterWrite={c.expire_after_write_ms}ms" if c.expire_after_write_ms else "",
            f"expireAfterAccess={c.expire_after_access_ms}ms" if c.expire_after_access_ms else "",
            f"cacheMissingKey={str(c.cache_missing_key).lower()}",
        ]
        return ", ".join(["PARTIAL", *(b for b in bits if b)])
    if c.kind == "FULL":
        when = (
            f"TIMED {c.reload_iso_time} every {c.reload_interval_days} d"
            if c.reload_strategy == "TIMED"
            else f"PERIODIC {c.reload_interval_ms}ms {c.schedule_mode}"
        )
        return f"FULL, {when}"
    return "NONE"


def _multi_join(node: MultiJoin) -> str:
    """Flink's StreamPhysicalMultiJoin: join types and conditions bottom up, the common key
    per input."""
    kinds = ", ".join(j.kind.name for j in node.joins)
    conditions = ", ".join(str(j.condition) for j in node.joins)
    common = ", ".join("(" + ", ".join(cols) + ")" for cols in node.common_key)
    return (
        f"MultiJoin(joinTypes=[{kinds}], joinConditions=[{conditions}], "
        f"commonJoinKey=[{common}], select={_list(node.row_type.names)})"
    )


def _temporal_join(node: TemporalJoin) -> str:
    time = (
        f"leftTimeAttribute=[{node.as_of}], rightTimeAttribute=[{node.right_time}]"
        if node.time == "event"
        else f"leftTimeAttribute=[{node.as_of}], temporal=[processing time: latest row]"
    )
    parts = [
        f"joinType=[{node.kind.value}]",
        f"where=[{node.condition}]",
        f"select={_list(node.row_type.names)}",
        time,
        f"rightPrimaryKey={_list(node.right_key)}",
    ]
    return f"TemporalJoin({', '.join(parts)})"


_T = TypeVar("_T")


def render_tree(
    root: _T, describe: Callable[[_T], str], inputs: Callable[[_T], Sequence[_T]]
) -> str:
    """A tree as Flink prints plans: ``:-`` before each input but the last, ``+-`` before the
    last; ``describe`` gives a node's text.

    >>> print(render_tree(3, str, lambda n: [n - 1, n - 2] if n > 1 else []))
    3
    :- 2
    :  :- 1
    :  +- 0
    +- 1
    """
    lines: list[str] = []

    def visit(n: _T, prefix: str, child_prefix: str) -> None:
        lines.append(prefix + describe(n))
        children = inputs(n)
        for i, child in enumerate(children):
            last = i == len(children) - 1
            visit(
                child,
                child_prefix + ("+- " if last else ":- "),
                child_prefix + ("   " if last else ":  "),
            )

    visit(root, "", "")
    return "\n".join(lines)


def render(node: PlanNode, optimized: bool) -> str:
    """The logical plan, or the optimized one (batch mode; a streaming query's optimized plan
    is its exec nodes: ``tableapi.physical``), as an indented tree."""
    return render_tree(node, optimized_text if optimized else logical_text, lambda n: n.inputs)
