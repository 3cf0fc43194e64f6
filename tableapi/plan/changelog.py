"""What a plan means on unbounded inputs: changelog modes and traits (what each node emits,
bottom-up; what its consumers need, top-down), join input specs (state layouts), which
inputs are bounded. The physical decisions made from them (join strategy, state TTLs,
aggregation phases) and the options they are made by are ``tableapi.physical``'s.

Each function derives a property from an (optimized) plan; none rewrites it.

Example::

    >>> from tableapi.plan import FileSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> row = RowType.of(("id", BIGINT))
    >>> changelog_mode(Scan("Orders", FileSource("/data/orders", "json"), row))
    <ChangelogMode.INSERT_ONLY: 'I'>
    >>> changelog_mode(Scan("Orders", FileSource("/data/orders", "json", op_column="op"), row))
    <ChangelogMode.ALL: 'I,UB,UA,D'>
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

import attrs

from tableapi.expressions import Column
from tableapi.plan.base import PlanNode
from tableapi.plan.joins import Join, JoinKind, MultiJoin, TemporalJoin
from tableapi.plan.lookup import LookupJoin
from tableapi.plan.relational import (
    Aggregate,
    Distinct,
    Exchange,
    Filter,
    Project,
    QueryHints,
    Union,
)
from tableapi.plan.sources import FileSource, NexmarkSource, Scan
from tableapi.plan.window_rank import WindowRank
from tableapi.plan.windows import WindowAggregate, WindowTableFunction


class ChangelogMode(Enum):
    """Which row kinds a node emits (Flink's ChangelogMode, in explain's short form)."""

    INSERT_ONLY = "I"
    UPSERT = "I,UA,D"  # updates without -U: each +U replaces the row of its upsert key
    ALL = "I,UB,UA,D"

    def __str__(self) -> str:
        return self.value


class ChangelogKind(str, Enum):
    """How a changelog addresses the rows it changes."""

    INSERT_ONLY = "insert-only"  # no updates
    UPSERT = "upsert"  # updates of a row come by its upsert key (one row per key)
    RETRACT = "retract"  # no upsert key: a -U/-D retracts an equal row


@attrs.frozen
class ChangelogTraits:
    """What a node's changelog is, derived bottom-up once per node (:func:`changelog_traits`):
    the row kinds it emits and its upsert keys (column sets by which its updates address
    rows; Flink's upsert keys). What its consumers need (its -U rows or not) is the other
    half, top-down: :func:`update_before_needed`.

    >>> t = ChangelogTraits(ChangelogMode.ALL, (("k",),))
    >>> t.kind.value, t.insert_only
    ('upsert', False)
    """

    mode: ChangelogMode
    upsert_keys: tuple[tuple[str, ...], ...] = ()

    @property
    def insert_only(self) -> bool:
        return self.mode is ChangelogMode.INSERT_ONLY

    @property
    def kind(self) -> ChangelogKind:
        """Insert-only, upsert (with :attr:`upsert_keys`) or retract."""
        if self.insert_only:
            return ChangelogKind.INSERT_ONLY
        return ChangelogKind.UPSERT if self.upsert_keys else ChangelogKind.RETRACT


_TRAITS = "_changelog_traits"  # where a node keeps its traits once derived


def changelog_traits(node: PlanNode) -> ChangelogTraits:
    """``node``'s changelog traits, derived once and kept on the node (nodes are immutable).

    >>> from tableapi.plan import FileSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> row = RowType.of(("id", BIGINT), ("v", BIGINT))
    >>> scan = Scan("Orders", FileSource("/data/orders", "json", op_column="op"), row)
    >>> agg = Aggregate(scan, ("id",), ())
    >>> changelog_traits(agg).kind.value, changelog_traits(agg).upsert_keys
    ('upsert', (('id',),))
    >>> changelog_traits(scan).kind.value
    'retract'
    """
    known = node.__dict__.get(_TRAITS)
    if known is None:
        known = ChangelogTraits(_derive_mode(node), node.unique_keys)
        object.__setattr__(node, _TRAITS, known)
    return known


def changelog_mode(node: PlanNode) -> ChangelogMode:
    """The row kinds ``node`` emits on unbounded inputs."""
    return changelog_traits(node).mode


def _scan_mode(node: Scan) -> ChangelogMode:
    source = node.source
    if isinstance(source, FileSource) and source.op_column:
        return ChangelogMode.ALL
    return ChangelogMode.INSERT_ONLY


def _input_mode(node: PlanNode) -> ChangelogMode:
    """The mode of the node's (first) input: a projection, filter or exchange passes row
    kinds through; a lookup join's output row keeps its probe row's kind; a temporal join
    emits one row per probe row, once."""
    return changelog_mode(node.inputs[0])


def _join_mode(node: Join) -> ChangelogMode:
    if node.interval is not None or node.window is not None:
        return ChangelogMode.INSERT_ONLY  # outer rows wait for the watermark: no retraction
    left, right = changelog_mode(node.left), changelog_mode(node.right)
    insert_only = left is right is ChangelogMode.INSERT_ONLY
    # Outer joins retract their null-padded rows; anti joins retract when a match comes.
    if insert_only and node.kind in (JoinKind.INNER, JoinKind.SEMI):
        return ChangelogMode.INSERT_ONLY
    return ChangelogMode.ALL


def _multi_join_mode(node: MultiJoin) -> ChangelogMode:
    inner = all(j.kind is JoinKind.INNER for j in node.joins)
    insert_only = all(changelog_mode(r) is ChangelogMode.INSERT_ONLY for r in node.relations)
    return ChangelogMode.INSERT_ONLY if inner and insert_only else ChangelogMode.ALL


def _union_mode(node: Union) -> ChangelogMode:
    modes = {changelog_mode(node.left), changelog_mode(node.right)}
    return ChangelogMode.ALL if ChangelogMode.ALL in modes else ChangelogMode.INSERT_ONLY


def _updates(node: PlanNode) -> ChangelogMode:
    # A key's result changes as rows come (-U/+U), and goes when its last row is retracted
    # (-D); the -U rows are left out where no consumer needs them.
    return ChangelogMode.ALL


#: Node type -> the row kinds it emits, from its inputs' (a node not here: all kinds).
_MODES: dict[type, Callable[[Any], ChangelogMode]] = {
    Scan: _scan_mode,
    Project: _input_mode,
    Filter: _input_mode,
    QueryHints: _input_mode,
    Exchange: _input_mode,
    LookupJoin: _input_mode,
    TemporalJoin: _input_mode,
    Aggregate: _updates,
    Distinct: _updates,
    Join: _join_mode,
    MultiJoin: _multi_join_mode,
    Union: _union_mode,
    WindowTableFunction: _input_mode,
    # one final row per window and key, once the watermark passes the window's end
    WindowAggregate: lambda n: ChangelogMode.INSERT_ONLY,
    # a window's rows ranked once, when the watermark passes the window's end
    WindowRank: lambda n: ChangelogMode.INSERT_ONLY,
}


def _derive_mode(node: PlanNode) -> ChangelogMode:
    return _MODES.get(type(node), _updates)(node)


def update_before_needed(
    plan: PlanNode, sink_keys: tuple[str, ...] | None = None
) -> dict[int, bool]:
    """Per node of ``plan`` (by ``id``): do its consumers need its -U rows (Flink's
    UpdateKind BEFORE_AND_AFTER), or do +U rows alone do (ONLY_UPDATE_AFTER)? Top-down from
    the plan's consumer: a result or a sink without a key (``sink_keys`` None) needs them;
    a sink keyed by ``sink_keys`` does not when the plan's upsert key is within them. A
    projection passes its consumer's need on while it keeps an upsert key; a filter needs
    them when it reads a column outside every upsert key (a row that stops passing must be
    retracted); joins, aggregates and unions need them from their inputs (they retract
    what a row joined or counted). An aggregate emits -U rows only where they are needed.

    >>> from tableapi.plan import FileSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> scan = Scan("T", FileSource("/t", "json", op_column="op"),
    ...             RowType.of(("k", BIGINT), ("v", BIGINT)))
    >>> from tableapi.expressions import col
    >>> agg = Aggregate(scan, ("k",), (("s", col("v").sum),))
    >>> update_before_needed(agg)[id(agg)], update_before_needed(agg, ("k",))[id(agg)]
    (True, False)
    >>> update_before_needed(agg, ("k",))[id(scan)]  # the aggregate retracts what it counted
    True
    """
    needed: dict[int, bool] = {}

    def visit(node: PlanNode, need: bool) -> None:
        if needed.get(id(node)) is True or (id(node) in needed and not need):
            return
        needed[id(node)] = need
        passes = _PASSES_NEED.get(type(node))
        if passes is None:
            for child in node.inputs:
                visit(child, True)
        else:
            visit(node.inputs[0], need or not passes(node))

    root_keys = changelog_traits(plan).upsert_keys
    keyed = sink_keys is not None and any(k and set(k) <= set(sink_keys) for k in root_keys)
    visit(plan, not keyed)
    return needed


def _projection_keeps_key(node: Project) -> bool:
    renamed = {e.name for e in node.exprs if isinstance(e, Column)}
    return any(k and set(k) <= renamed for k in changelog_traits(node.input).upsert_keys)


def _filter_within_key(node: Filter) -> bool:
    keys = changelog_traits(node).upsert_keys
    return any(k and node.condition.column_names() <= set(k) for k in keys)


#: Node type -> does it pass its consumer's need (of -U rows or not) on to its input
#: unchanged? (a node not here needs them from every input).
_PASSES_NEED: dict[type, Callable[[Any], bool]] = {
    QueryHints: lambda n: True,
    Exchange: lambda n: True,
    Project: _projection_keeps_key,
    Filter: _filter_within_key,
}


def is_changelog(node: PlanNode) -> bool:
    """Does ``node`` emit updates (and so carry the row-kind column)?"""
    return changelog_mode(node) is ChangelogMode.ALL


def input_spec(node: PlanNode, join_keys: tuple[str, ...]) -> str:
    """Flink's JoinInputSideSpec, chosen from the input's unique keys and the join keys."""
    keys = node.unique_keys
    if any(key and set(key) <= set(join_keys) for key in keys):
        return "JoinKeyContainsUniqueKey"
    if keys:
        return "HasUniqueKey"
    return "NoUniqueKey"


def unique_key_for_state(node: PlanNode) -> tuple[str, ...]:
    """The unique key a join keeps its state by: the shortest one (fewest columns to hash)."""
    keys = [k for k in node.unique_keys if k]
    return min(keys, key=len) if keys else ()


def reads_changelog_files(plan: PlanNode) -> bool:
    """Does ``plan`` read a filesystem table as a changelog (``changelog.op-column``)?

    >>> from tableapi.plan import FileSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> changes = FileSource("/data/a", "json", op_column="op")
    >>> reads_changelog_files(Scan("A", changes, RowType.of(("a", BIGINT))))
    True
    """
    return any(
        isinstance(n, Scan) and isinstance(n.source, FileSource) and bool(n.source.op_column)
        for n in plan.walk()
    )


def is_bounded(scan: Scan) -> bool:
    """A bounded input ends: a filesystem table without ``source.monitor-interval`` (as in
    Flink), a nexmark table of ``events.num`` > 0. A streaming Spark DataFrame is taken as
    unbounded."""
    return isinstance(scan.source, FileSource | NexmarkSource) and scan.source.bounded


def _scans(plan: PlanNode) -> list[Scan]:
    return [n for n in plan.walk() if isinstance(n, Scan)]


def all_bounded(plan: PlanNode) -> bool:
    """Every input ends, so the query runs to the end of its input and stops."""
    return all(is_bounded(n) for n in _scans(plan))


def needs_end_of_input(plan: PlanNode) -> bool:
    """Some bounded table has a watermark, which the end of its input moves to +infinity."""
    return any(
        is_bounded(n) and n.schema is not None and n.schema.watermark is not None
        for n in _scans(plan)
    )


def read_at_once(plan: PlanNode) -> bool:
    """Every input is bounded and read whole by the first micro-batch, so the end of the
    inputs can be signalled before the query starts (it is read in that same batch)."""
    return all(
        isinstance(n.source, FileSource | NexmarkSource) and n.source.read_at_once
        for n in _scans(plan)
    )


def monitor_interval_ms(plan: PlanNode) -> int | None:
    """The shortest ``source.monitor-interval`` of the plan's watched tables: the query's
    trigger interval (Spark lists every directory once per micro-batch)."""
    intervals = [
        n.source.monitor_interval_ms
        for n in _scans(plan)
        if isinstance(n.source, FileSource) and n.source.monitor_interval_ms is not None
    ]
    return min(intervals, default=None)
