"""What a plan means on unbounded inputs: changelog modes, join input specs (state layouts),
join strategies, state TTLs, and which inputs are bounded.

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

from enum import Enum

import attrs

from tableapi.durations import parse_duration_ms
from tableapi.errors import ValidationError
from tableapi.expressions import Call, Column, conjuncts
from tableapi.plan.base import PlanNode
from tableapi.plan.joins import Join, JoinKind, MultiJoin, TemporalJoin
from tableapi.plan.lookup import LookupJoin, lookup_table_misuse
from tableapi.plan.relational import (
    Aggregate,
    Distinct,
    Exchange,
    Filter,
    Project,
    QueryHints,
    Union,
)
from tableapi.plan.sources import ElementsSource, FileSource, JdbcSource, Scan, SparkSource

# Operators that run in streaming mode; the others need a bounded input today.
_STREAMING_NODES = (
    Aggregate,
    Distinct,
    Scan,
    Project,
    Filter,
    Join,
    MultiJoin,
    TemporalJoin,
    LookupJoin,
    Exchange,
    Union,
    QueryHints,
)


class StateBackend(str, Enum):
    """Where a streaming query keeps its state (Flink's ``state.backend.type``), chosen per
    query as Spark's state store provider."""

    HASHMAP = "hashmap"  # Spark's HDFS-backed store: state in memory, checkpointed to files
    ROCKSDB = "rocksdb"  # Spark's RocksDB store


class AggPhaseStrategy(str, Enum):
    """``table.optimizer.agg-phase-strategy`` (Flink's values): in streaming mode a group
    aggregation runs in two phases (a local pre-aggregation before the shuffle, a global one
    after it) unless ``ONE_PHASE``, when mini-batch is on and every aggregate function can
    merge partial results (:func:`two_phase`); ``AUTO`` and ``TWO_PHASE`` then agree."""

    AUTO = "AUTO"
    ONE_PHASE = "ONE_PHASE"
    TWO_PHASE = "TWO_PHASE"


@attrs.frozen
class StreamingOptions:
    """The configuration streaming planning reads (from ``TableConfig``), plus what the
    session knows of its server."""

    default_ttl_ms: int | None = None  # table.exec.state.ttl
    native_joins: bool = True  # table.exec.join.spark-native.enabled
    state_backend: StateBackend = StateBackend.HASHMAP  # state.backend.type
    # Does the server run server_ext's JVM plugin (the only runtime of stateful operators)?
    # None: not asked yet (explain before connecting), taken as yes; the streaming executor
    # asks once per session before it compiles, and a stateful query without it is refused.
    jvm_plugin: bool | None = None
    # table.exec.mini-batch.enabled: its allow-latency (the micro-batch interval at least),
    # and aggregations fold a key's changes of a micro-batch before emitting; None: off
    mini_batch_ms: int | None = None
    mini_batch_size: int | None = None  # table.exec.mini-batch.size: the most rows a bundle folds
    agg_phase_strategy: AggPhaseStrategy = AggPhaseStrategy.AUTO  # table.optimizer.agg-phase-..


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


class JoinStrategy(str, Enum):
    """How a streaming join runs."""

    NATIVE = "native"  # Spark's own stream-stream join
    INTERVAL = "interval"  # Spark's stream-stream join with watermarks and time bounds
    INTERVAL_OPERATOR = "interval-operator"  # server_ext's interval join processor
    OPERATOR = "operator"  # a server_ext operator


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


def _derive_mode(node: PlanNode) -> ChangelogMode:
    if isinstance(node, Scan):
        source = node.source
        if isinstance(source, FileSource) and source.op_column:
            return ChangelogMode.ALL
        return ChangelogMode.INSERT_ONLY
    if isinstance(node, Project | Filter | QueryHints | Exchange):
        return changelog_mode(node.input)
    if isinstance(node, LookupJoin):
        return changelog_mode(node.input)  # each output row keeps its probe row's kind
    if isinstance(node, Aggregate | Distinct):
        # A key's result changes as rows come (-U/+U), and goes when its last row is
        # retracted (-D); the -U rows are left out where no consumer needs them.
        return ChangelogMode.ALL
    if isinstance(node, Join):
        if node.interval is not None:
            return ChangelogMode.INSERT_ONLY  # outer rows wait for the watermark: no retraction
        left, right = changelog_mode(node.left), changelog_mode(node.right)
        insert_only = left is right is ChangelogMode.INSERT_ONLY
        # Outer joins retract their null-padded rows; anti joins retract when a match comes.
        if insert_only and node.kind in (JoinKind.INNER, JoinKind.SEMI):
            return ChangelogMode.INSERT_ONLY
        return ChangelogMode.ALL
    if isinstance(node, MultiJoin):
        inner = all(j.kind is JoinKind.INNER for j in node.joins)
        insert_only = all(changelog_mode(r) is ChangelogMode.INSERT_ONLY for r in node.relations)
        return ChangelogMode.INSERT_ONLY if inner and insert_only else ChangelogMode.ALL
    if isinstance(node, TemporalJoin):
        return changelog_mode(node.left)  # one output row per probe row, emitted once
    if isinstance(node, Union):
        modes = {changelog_mode(node.left), changelog_mode(node.right)}
        return ChangelogMode.ALL if ChangelogMode.ALL in modes else ChangelogMode.INSERT_ONLY
    return ChangelogMode.ALL


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
        keys = changelog_traits(node).upsert_keys
        if isinstance(node, QueryHints | Exchange):
            visit(node.input, need)
        elif isinstance(node, Project):
            renamed = {e.name for e in node.exprs if isinstance(e, Column)}
            kept = any(k and set(k) <= renamed for k in changelog_traits(node.input).upsert_keys)
            visit(node.input, need or not kept)
        elif isinstance(node, Filter):
            within = any(k and node.condition.column_names() <= set(k) for k in keys)
            visit(node.input, need or not within)
        else:
            for child in node.inputs:
                visit(child, True)

    root_keys = changelog_traits(plan).upsert_keys
    keyed = sink_keys is not None and any(k and set(k) <= set(sink_keys) for k in root_keys)
    visit(plan, not keyed)
    return needed


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


def state_ttl_ms(join: Join, side: str, default_ms: int | None) -> int | None:
    """State retention of one join input: its STATE_TTL hint, else ``table.exec.state.ttl``."""
    for hint, hint_side in join.hints:
        if hint.name == "STATE_TTL" and hint_side == side:
            options = dict(hint.options)
            ttl = parse_duration_ms(options[hint.tables[0]], f"STATE_TTL of {hint.tables[0]}")
            return ttl or None  # Flink: 0 means no TTL
    return default_ms


def aggregate_ttl_ms(node: Aggregate | Distinct, default_ms: int | None) -> int | None:
    """State retention of an aggregation's accumulators: a STATE_TTL hint that names the
    table it reads, else ``table.exec.state.ttl``.

    >>> from tableapi.plan import FileSource, Hint, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> scan = Scan("T", FileSource("/t", "json"), RowType.of(("k", BIGINT)))
    >>> hint = Hint("STATE_TTL", ("T",), (("T", "1 h"),))
    >>> aggregate_ttl_ms(Distinct(scan, (hint,)), None), aggregate_ttl_ms(Distinct(scan), 5)
    (3600000, 5)
    """
    for hint in node.hints:
        if hint.name == "STATE_TTL":
            options = dict(hint.options)
            ttl = parse_duration_ms(options[hint.tables[0]], f"STATE_TTL of {hint.tables[0]}")
            return ttl or None  # Flink: 0 means no TTL
    return default_ms


#: The aggregate functions whose partial results merge (all of Flink's built-in ones the
#: product has: COUNT, SUM, AVG, MIN, MAX and their DISTINCT forms).
_MERGEABLE = frozenset({"count", "sum", "avg", "min", "max"})


def two_phase(node: Aggregate | Distinct, options: StreamingOptions) -> bool:
    """Does the aggregation run in two phases (Flink's TwoStageOptimizedAggregateRule in
    streaming mode): mini-batch on, ``table.optimizer.agg-phase-strategy`` not ``ONE_PHASE``,
    and every aggregate function mergeable. Each task then folds its rows of a micro-batch
    into one partial result per group key before the shuffle (skewed keys move a few partials
    instead of all their rows), and the aggregate merges them.

    >>> from tableapi.plan import FileSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> from tableapi.expressions import col
    >>> scan = Scan("T", FileSource("/t", "json"), RowType.of(("k", BIGINT), ("v", BIGINT)))
    >>> agg = Aggregate(scan, ("k",), (("s", col("v").sum),))
    >>> two_phase(agg, StreamingOptions()), two_phase(agg, StreamingOptions(mini_batch_ms=1000))
    (False, True)
    >>> two_phase(agg, StreamingOptions(mini_batch_ms=1000,
    ...                                 agg_phase_strategy=AggPhaseStrategy.ONE_PHASE))
    False
    """
    if options.mini_batch_ms is None or options.agg_phase_strategy is AggPhaseStrategy.ONE_PHASE:
        return False
    aggs = node.aggs if isinstance(node, Aggregate) else ()
    return all(
        isinstance(e, Call) and e.name.removesuffix("_distinct") in _MERGEABLE for _, e in aggs
    )


def join_strategy(join: Join, options: StreamingOptions) -> JoinStrategy:
    """Interval joins: ``interval`` (Spark's join) for inner ones, ``interval-operator``
    (server_ext) for outer ones. Regular joins: ``native`` when Spark's own stream-stream
    join has the same semantics (an inner join of insert-only inputs on equi keys, without
    state TTL); else ``operator`` (server_ext).
    ``table.exec.join.spark-native.enabled = false`` forces the operators (benchmarks)."""
    if join.interval is not None:
        # Inner: Spark's answer is Flink's (the pairs within the bounds; a NULL key never
        # matches). Outer: Spark never pads an outer row whose residual condition fails,
        # and drops outer rows with a NULL key (docs/architecture.md), so server_ext runs them.
        if options.native_joins and join.kind is JoinKind.INNER:
            return JoinStrategy.INTERVAL
        return JoinStrategy.INTERVAL_OPERATOR
    default_ttl_ms = options.default_ttl_ms
    native = (
        options.native_joins
        and join.kind is JoinKind.INNER
        and bool(join.equi_keys)
        and not _residual_on_keys_only(join)
        and changelog_mode(join.left) is ChangelogMode.INSERT_ONLY
        and changelog_mode(join.right) is ChangelogMode.INSERT_ONLY
        and state_ttl_ms(join, "left", default_ttl_ms) is None
        and state_ttl_ms(join, "right", default_ttl_ms) is None
    )
    return JoinStrategy.NATIVE if native else JoinStrategy.OPERATOR


def _residual_on_keys_only(join: Join) -> bool:
    """Does a residual term read the equi-key columns only (``a = b AND b <> a``)? Spark's
    optimizer may fold it with the keys, leaving no equality: its stream-stream join then
    fails ("without equality predicate"), where Flink gives the (empty) answer."""
    if join.residual is None or not join.equi_keys:
        return False
    keys = {c for k in join.equi_keys for c in (k.left, k.right)}
    return any(
        term.column_names() and term.column_names() <= keys for term in conjuncts(join.residual)
    )


def operator_nodes(plan: PlanNode, options: StreamingOptions) -> list[PlanNode]:
    """The nodes of ``plan`` that run a server_ext operator (not Spark's own joins).

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> from tableapi.expressions import col
    >>> from tableapi.rules import optimize
    >>> a = Scan("A", ElementsSource(()), RowType.of(("a", BIGINT)))
    >>> b = Scan("B", ElementsSource(()), RowType.of(("b", BIGINT)))
    >>> inner = optimize(Join(a, b, JoinKind.INNER, col("a") == col("b"))).plan
    >>> operator_nodes(inner, StreamingOptions())  # Spark's native join
    []
    >>> [type(n).__name__ for n in operator_nodes(inner, StreamingOptions(native_joins=False))]
    ['Join']
    """
    return [n for n in plan.walk() if _runs_operator(n, options)]


def _runs_operator(node: PlanNode, options: StreamingOptions) -> bool:
    if isinstance(node, Join):
        return join_strategy(node, options) in (
            JoinStrategy.OPERATOR,
            JoinStrategy.INTERVAL_OPERATOR,
        )
    return isinstance(node, MultiJoin | TemporalJoin | Aggregate | Distinct)


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
    Flink). A streaming Spark DataFrame is taken as unbounded."""
    return isinstance(scan.source, FileSource) and scan.source.bounded


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


def monitor_interval_ms(plan: PlanNode) -> int | None:
    """The shortest ``source.monitor-interval`` of the plan's watched tables: the query's
    trigger interval (Spark lists every directory once per micro-batch)."""
    intervals = [
        n.source.monitor_interval_ms
        for n in _scans(plan)
        if isinstance(n.source, FileSource) and n.source.monitor_interval_ms is not None
    ]
    return min(intervals, default=None)


def check_hash_lookup(node: LookupJoin) -> None:
    """FLIP-204: the probe input of a hash lookup join (SHUFFLE_HASH, LOOKUP 'shuffle') is
    insert-only, or its upsert key contains the lookup keys: hashing on the keys must not
    send the changes of one row to different tasks. An error, not a hint quietly dropped
    (Flink 2.3 runs such a query unshuffled): the user asked for a distribution the plan
    cannot keep, so they hear why and what to change (issue 12)."""
    if not is_changelog(node.input):
        return
    keys = set().union(
        *(k.probe.column_names() for k in node.lookup.probe_keys if k.probe is not None)
    )
    upsert = node.input.unique_keys
    if any(keys <= set(u) for u in upsert if u):
        return
    shown = [list(u) for u in upsert if u]
    raise ValidationError(
        f"The hash lookup join on {node.table_name} (SHUFFLE_HASH, or LOOKUP 'shuffle'='true') "
        "needs an insert-only probe input, or one whose upsert key contains the lookup keys "
        f"{sorted(keys)} (FLIP-204); the probe input is a changelog with upsert keys "
        f"{shown}: hashing on the lookup keys would send the changes of one row to different "
        "tasks, out of order. Remove the hint, or look up by columns of the upsert key."
    )


def check_streaming(plan: PlanNode) -> None:
    """Errors for plans that cannot run on unbounded inputs, raised at plan time."""
    for node in plan.walk():
        if not isinstance(node, _STREAMING_NODES):
            raise ValidationError(
                f"{type(node).__name__} is not supported in streaming mode yet; run this "
                "query with TableEnvironment.create(mode='batch')."
            )
        if isinstance(node, Scan) and isinstance(node.source, JdbcSource):
            raise ValidationError(lookup_table_misuse(node.table_name))
        if isinstance(node, LookupJoin) and node.shuffle:
            check_hash_lookup(node)
        if isinstance(node, Scan) and isinstance(node.source, ElementsSource):
            raise ValidationError(
                f"Table {node.table_name} comes from from_elements(), a bounded input: in "
                "streaming mode read a filesystem table (create_temporary_table) instead."
            )
        if isinstance(node, Scan) and isinstance(node.source, SparkSource):
            if not node.source.dataframe.isStreaming:
                raise ValidationError(
                    f"Table {node.table_name} wraps a batch Spark DataFrame; in streaming mode "
                    "pass a streaming one (spark.readStream...)."
                )
        if isinstance(node, TemporalJoin) and is_changelog(node.left):
            raise ValidationError(
                "The probe (left) side of a temporal join must be insert-only; "
                f"[{', '.join(sorted(node.left.table_names()))}] is a changelog."
            )
        if isinstance(node, Join) and node.interval is not None:
            for side in (node.left, node.right):
                if is_changelog(side):
                    raise ValidationError(
                        f"An interval join needs insert-only inputs, but "
                        f"[{', '.join(sorted(side.table_names()))}] is a changelog "
                        "(changelog.op-column). Join it with a regular join, or read an "
                        "append-only table."
                    )
