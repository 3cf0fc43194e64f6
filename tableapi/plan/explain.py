"""Flink-style plan text for ``Table.explain()``.

Example output::

    Join(joinType=[InnerJoin], where=[(product_id = id)], select=[order_id, product_id, id],
         leftInputSpec=[NoUniqueKey], rightInputSpec=[JoinKeyContainsUniqueKey])
    :- TableSourceScan(table=[[default_catalog, default_database, Orders]], fields=[...])
    +- TableSourceScan(table=[[default_catalog, default_database, Product]], fields=[...])
"""

from __future__ import annotations

from collections.abc import Callable

from tableapi.expressions import Call
from tableapi.plan.base import PlanNode
from tableapi.plan.changelog import (
    ChangelogMode,
    JoinStrategy,
    StateBackend,
    StreamingOptions,
    aggregate_ttl_ms,
    changelog_mode,
    input_spec,
    join_strategy,
    state_ttl_ms,
    two_phase,
    update_before_needed,
)
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


def _table(name: str) -> str:
    return f"table=[[default_catalog, default_database, {name}]]"


def _list(items: object) -> str:
    return "[" + ", ".join(str(i) for i in items) + "]"  # type: ignore[attr-defined]


def _logical(node: PlanNode) -> str:
    if isinstance(node, Scan):
        return f"LogicalTableScan({_table(node.table_name)})"
    if isinstance(node, Project):
        cols = ", ".join(f"{n}=[{e}]" for e, n in zip(node.exprs, node.names, strict=True))
        return f"LogicalProject({cols})"
    if isinstance(node, Filter):
        return f"LogicalFilter(condition=[{node.condition}])"
    if isinstance(node, Aggregate):
        aggs = "".join(f", {n}=[{a}]" for n, a in node.aggs)
        return f"LogicalAggregate(group=[{{{', '.join(node.group_keys)}}}]{aggs})"
    if isinstance(node, Join):
        cond = "true" if node.condition is None else node.condition
        return f"LogicalJoin(condition=[{cond}], joinType=[{node.kind.logical_name}])"
    if isinstance(node, TemporalJoin):
        return (
            f"LogicalJoin(condition=[{node.condition}], joinType=[{node.kind.logical_name}], "
            f"forSystemTimeAsOf=[{node.as_of}])"
        )
    if isinstance(node, LookupJoin):
        return (
            f"LogicalCorrelate(condition=[{node.condition}], "
            f"joinType=[{node.kind.logical_name}], forSystemTimeAsOf=[{node.as_of}], "
            f"{_table(node.table_name)})"
        )
    if isinstance(node, Exchange):
        return _exchange(node)
    if isinstance(node, Distinct):
        return f"LogicalAggregate(group=[{{{', '.join(node.row_type.names)}}}])"
    if isinstance(node, Sort):
        return f"LogicalSort(sort=[{', '.join(map(str, node.keys))}])"
    if isinstance(node, Limit):
        return f"LogicalSort(offset=[{node.offset}], fetch=[{node.fetch}])"
    if isinstance(node, Union):
        return f"LogicalUnion(all=[{str(not node.distinct).lower()}])"
    if isinstance(node, QueryHints):
        return f"LogicalHints(hints=[{', '.join(map(str, node.hints))}])"
    return type(node).__name__


def _optimized(node: PlanNode) -> str:
    names = _list(node.row_type.names)
    if isinstance(node, Scan):
        return f"TableSourceScan({_table(node.table_name)}, fields={names})"
    if isinstance(node, Project):
        cols = [
            str(e) if getattr(e, "name", None) == n else f"{e} AS {n}"
            for e, n in zip(node.exprs, node.names, strict=True)
        ]
        return f"Calc(select={_list(cols)})"
    if isinstance(node, Filter):
        return f"Calc(select={names}, where=[{node.condition}])"
    if isinstance(node, Aggregate):
        sel = list(node.group_keys) + [f"{a} AS {n}" for n, a in node.aggs]
        group_by = f"groupBy={_list(node.group_keys)}, " if node.group_keys else ""
        return f"GroupAggregate({group_by}select={_list(sel)})"
    if isinstance(node, Join):
        return _join(node)
    if isinstance(node, TemporalJoin):
        return _temporal_join(node)
    if isinstance(node, MultiJoin):
        return _multi_join(node)
    if isinstance(node, LookupJoin):
        return _lookup_join(node)
    if isinstance(node, Exchange):
        return _exchange(node)
    if isinstance(node, Distinct):
        return f"GroupAggregate(groupBy={names}, select={names})"
    if isinstance(node, Sort):
        return f"Sort(orderBy={_list(node.keys)})"
    if isinstance(node, Limit):
        return f"Limit(offset=[{node.offset}], fetch=[{node.fetch}])"
    if isinstance(node, Union):
        return f"Union(all=[{str(not node.distinct).lower()}], union={names})"
    return _logical(node)


def _join(node: Join) -> str:
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
        parts.append(f"leftInputSpec=[{input_spec(node.left, left_keys)}]")
        parts.append(f"rightInputSpec=[{input_spec(node.right, right_keys)}]")
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


def _streaming(
    node: PlanNode, options: StreamingOptions, backend: StateBackend, update_before: bool
) -> str:
    """The optimized node's text plus what streaming adds: the join operator, the state
    backend it runs on, state TTL and the changelog mode (Flink's
    ``changelogMode=[...]``: ``[I,UA,D]`` where no consumer needs the node's -U rows, as
    for an upsert sink keyed by its upsert key)."""
    text = _optimized(node)
    extra = []

    def runs_on() -> None:
        extra.append(f"stateBackend=[{backend.value}]")

    if isinstance(node, Join):
        strategy = join_strategy(node, options)
        if strategy is JoinStrategy.OPERATOR:
            extra.append("operator=[server_ext join processor]")
            runs_on()
        elif strategy is JoinStrategy.INTERVAL_OPERATOR:
            extra.append("operator=[server_ext interval join processor]")
            runs_on()
        else:
            extra.append("operator=[spark stream-stream join]")
            extra.append(f"stateBackend=[{backend.value}]")
        for side in ("left", "right"):
            ttl = state_ttl_ms(node, side, options.default_ttl_ms)
            if ttl is not None:
                extra.append(f"{side}StateTtl=[{ttl} ms]")
    if isinstance(node, LookupJoin):
        extra.append("operator=[server_ext lookup join, per Arrow batch]")
    if isinstance(node, MultiJoin):
        extra.append("operator=[server_ext multi-way join processor]")
        runs_on()
        if options.default_ttl_ms is not None:
            extra.append(f"stateTtl=[{options.default_ttl_ms} ms]")
    if isinstance(node, TemporalJoin):
        extra.append("operator=[server_ext temporal join processor]")
        runs_on()
    local = None
    if isinstance(node, Aggregate | Distinct):
        extra.append("operator=[server_ext group aggregate]")
        runs_on()
        ttl = aggregate_ttl_ms(node, options.default_ttl_ms)
        if ttl is not None:
            extra.append(f"stateTtl=[{ttl} ms]")
        if options.mini_batch_ms is not None:
            extra.append(f"miniBatch=[{options.mini_batch_ms} ms]")
        if two_phase(node, options):
            text, local = _two_phases(node)
    mode = changelog_mode(node)
    if mode is ChangelogMode.ALL and not update_before:
        mode = ChangelogMode.UPSERT
    extra.append(f"changelogMode=[{mode}]")
    text = text[:-1] + ", " + ", ".join(extra) + ")" if text.endswith(")") else text
    return text if local is None else f"{text}\n{local}"


def _two_phases(node: Aggregate | Distinct) -> tuple[str, str]:
    """A two-phase aggregation as Flink shows it: the global aggregate merging the partial
    results (``sum$0``, ``count1$1``, ...) that the local one computes per task."""
    keys = list(node.group_keys) if isinstance(node, Aggregate) else list(node.row_type.names)
    aggs = node.aggs if isinstance(node, Aggregate) else ()
    local, merged = list(keys), list(keys)
    for i, (name, agg) in enumerate(aggs):
        fn = agg.name.removesuffix("_distinct") if isinstance(agg, Call) else str(agg)
        counts_rows = fn == "count" and str(agg) in ("COUNT(*)", "COUNT(1)")
        partial = f"{'count1' if counts_rows else fn}${i}"
        distinct = "DISTINCT " if isinstance(agg, Call) and agg.name.endswith("_distinct") else ""
        local.append(f"{agg} AS {partial}")
        merged.append(f"{fn.upper()}({distinct}{partial}) AS {name}")
    group_by = f"groupBy={_list(keys)}, " if keys else ""
    return (
        f"GlobalGroupAggregate({group_by}select={_list(merged)})",
        f"LocalGroupAggregate({group_by}select={_list(local)}, changelogMode=[I])",
    )


def render(
    node: PlanNode,
    optimized: bool,
    streaming: StreamingOptions | None = None,
    sink_keys: tuple[str, ...] | None = None,
) -> str:
    """The plan as an indented tree, Flink's ``:-`` / ``+-`` style. In streaming mode the
    optimized plan also shows changelog modes, join operators, their state backend,
    and state TTLs; ``sink_keys``: the plan feeds an upsert sink keyed by them (its -U rows
    are dropped where the upsert key is within them)."""
    lines: list[str] = []
    describe: Callable[[PlanNode], str]
    if optimized and streaming is not None:
        options = streaming
        backend = options.state_backend  # one per query
        needed = update_before_needed(node, sink_keys)

        def describe(n: PlanNode) -> str:
            return _streaming(n, options, backend, needed.get(id(n), True))

    else:
        describe = _optimized if optimized else _logical

    def visit(n: PlanNode, prefix: str, child_prefix: str) -> None:
        # A node shown as a chain (a two-phase aggregate: global, then local) has its
        # inputs under its last line.
        first, *chained = describe(n).split("\n")
        lines.append(prefix + first)
        for line in chained:
            lines.append(child_prefix + "+- " + line)
            child_prefix += "   "
        inputs = n.inputs
        for i, child in enumerate(inputs):
            last = i == len(inputs) - 1
            visit(
                child,
                child_prefix + ("+- " if last else ":- "),
                child_prefix + ("   " if last else ":  "),
            )

    visit(node, "", "")
    return "\n".join(lines)
