"""Group aggregation exec nodes (streaming): one phase (``StreamExecGroupAggregate``), or
two (``StreamExecLocalGroupAggregate`` under ``StreamExecGlobalGroupAggregate``, as Flink's
TwoStageOptimizedAggregateRule makes them), decided once here.

Example::

    >>> from tableapi.plan import Aggregate, FileSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> from tableapi.expressions import col
    >>> from tableapi.physical import StreamingOptions, plan_stream
    >>> scan = Scan("T", FileSource("/t", "json"), RowType.of(("k", BIGINT), ("v", BIGINT)))
    >>> agg = Aggregate(scan, ("k",), (("s", col("v").sum),))
    >>> [type(n).__name__ for n in plan_stream(agg, StreamingOptions()).root.walk()]
    ['StreamExecGroupAggregate', 'StreamExecTableSourceScan']
    >>> [n.NAME for n in plan_stream(agg, StreamingOptions(mini_batch_ms=1000)).root.walk()]
    ['stream-exec-global-group-aggregate', 'stream-exec-local-group-aggregate', \
'stream-exec-table-source-scan']
"""

from __future__ import annotations

from typing import Any

import attrs

from server_ext.aggregate_spec import AggregateSpec
from tableapi.durations import parse_duration_ms
from tableapi.expressions import Call, Expression
from tableapi.physical.base import (
    ExecNode,
    OperatorInput,
    StreamExecOperator,
    Translation,
    exec_node,
    translates,
)
from tableapi.physical.options import AggPhaseStrategy, StateBackend, StreamingOptions
from tableapi.physical.specs import aggregate_spec
from tableapi.plan import Aggregate, Distinct
from tableapi.plan.changelog import (
    ChangelogMode,
    ChangelogTraits,
)

#: The aggregate functions whose partial results merge (all of Flink's built-in ones the
#: product has: COUNT, SUM, AVG, MIN, MAX and their DISTINCT forms).
_MERGEABLE = frozenset({"count", "sum", "avg", "min", "max"})


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


def two_phase(aggs: tuple[tuple[str, Expression], ...], options: StreamingOptions) -> bool:
    """Does the aggregation run in two phases (Flink's TwoStageOptimizedAggregateRule in
    streaming mode): mini-batch on, ``table.optimizer.agg-phase-strategy`` not ``ONE_PHASE``,
    and every aggregate function mergeable. Each task then folds its rows of a micro-batch
    into one partial result per group key before the shuffle (skewed keys move a few partials
    instead of all their rows), and the aggregate merges them.

    >>> from tableapi.expressions import col
    >>> aggs = (("s", col("v").sum),)
    >>> two_phase(aggs, StreamingOptions()), two_phase(aggs, StreamingOptions(mini_batch_ms=1000))
    (False, True)
    >>> two_phase(aggs, StreamingOptions(mini_batch_ms=1000,
    ...                                  agg_phase_strategy=AggPhaseStrategy.ONE_PHASE))
    False
    """
    if options.mini_batch_ms is None or options.agg_phase_strategy is AggPhaseStrategy.ONE_PHASE:
        return False
    return mergeable(aggs)


def mergeable(aggs: tuple[tuple[str, Expression], ...]) -> bool:
    """Can every aggregate call's partial results merge (Flink's
    ``doAllSupportPartialMerge``)?

    >>> from tableapi.expressions import col
    >>> mergeable((("s", col("v").sum), ("n", col("v").count.distinct)))
    True
    """
    return all(
        isinstance(e, Call) and e.name.removesuffix("_distinct") in _MERGEABLE for _, e in aggs
    )


@attrs.frozen
class AggregateState:
    """What the group aggregate operator runs by (both phases of a two-phase one share
    it): whether it emits -U rows, its accumulators' TTL, mini-batch (the micro-batch
    interval it folds a key's changes over, and the most rows a bundle folds) and where its
    state lives."""

    update_before: bool = True
    ttl_ms: int | None = None
    mini_batch_ms: int | None = None
    bundle_size: int | None = None
    state_backend: StateBackend = StateBackend.HASHMAP

    @classmethod
    def of(cls, node: Any, t: Translation) -> AggregateState:
        options = t.options
        return cls(
            t.update_before,
            aggregate_ttl_ms(node, options.default_ttl_ms),
            options.mini_batch_ms,
            options.mini_batch_size,
            options.state_backend,
        )

    def details(self) -> list[str]:
        extra = ["operator=[server_ext group aggregate]"]
        extra.append(f"stateBackend=[{self.state_backend.value}]")
        if self.ttl_ms is not None:
            extra.append(f"stateTtl=[{self.ttl_ms} ms]")
        if self.mini_batch_ms is not None:
            extra.append(f"miniBatch=[{self.mini_batch_ms} ms]")
        return extra


@exec_node("stream-exec-group-aggregate", 1, implements=(Aggregate,))
@attrs.frozen(eq=False)
class StreamExecGroupAggregate(StreamExecOperator):
    """server_ext's group aggregate operator in one phase: every row of a key shuffled to
    it; -U rows emitted only where ``update_before``. ``group_keys`` and ``aggs``: a
    Distinct's are all its columns and none."""

    group_keys: tuple[str, ...] = ()
    aggs: tuple[tuple[str, Expression], ...] = ()
    state: AggregateState = AggregateState()

    @property
    def stateful(self) -> bool:
        return True

    @property
    def waits_for_watermark(self) -> bool:
        return False  # updates are emitted per micro-batch; timers only expire state (TTL)

    @property
    def two_phase(self) -> bool:
        return False

    @classmethod
    def translate(cls, node: Any, t: Translation) -> ExecNode:
        return _aggregate(node, node.group_keys, node.aggs, t)

    def operator_spec(self) -> AggregateSpec:
        return aggregate_spec(self)[0]

    def operator_inputs(self) -> tuple[OperatorInput, ...]:
        """The input grouped by the group key, carrying each aggregate argument computed
        before the shuffle. The keys travel in ``__k0..``: the operator reads only the
        calls' arguments from the row, so the key fields are NULL there, not a second copy
        of each key for every row to build, shuffle and fold."""
        _, columns = aggregate_spec(self)
        keys = len(self.group_keys)
        row = tuple((n, None if i < keys else e, t) for i, (n, e, t) in enumerate(columns))
        return (OperatorInput(self.input, self.group_keys, row=row),)

    def details(self) -> list[str]:
        return self.state.details()


@translates(Distinct)
def _distinct(node: Distinct, t: Translation) -> ExecNode:
    return _aggregate(node, node.row_type.names, (), t)


def _aggregate(
    node: Aggregate | Distinct,
    keys: tuple[str, ...],
    aggs: tuple[tuple[str, Expression], ...],
    t: Translation,
) -> ExecNode:
    """One phase, or a local and a global one (:func:`two_phase`)."""
    state = AggregateState.of(node, t)
    if not two_phase(aggs, t.options):
        return StreamExecGroupAggregate(
            node, t.inputs, t.traits, t.update_before, keys, aggs, state
        )
    partials = ChangelogTraits(ChangelogMode.INSERT_ONLY)
    local = StreamExecLocalGroupAggregate(node, t.inputs, partials, False, keys, aggs, state)
    return StreamExecGlobalGroupAggregate(
        node, (local,), t.traits, t.update_before, keys, aggs, state
    )


@exec_node("stream-exec-local-group-aggregate", 1)
@attrs.frozen(eq=False)
class StreamExecLocalGroupAggregate(StreamExecGroupAggregate):
    """The local phase: each task folds its rows of a micro-batch into one partial
    accumulator per group key before the shuffle (insert-only partials, in any order)."""

    @property
    def stateful(self) -> bool:
        return False  # one bundle's partials, dropped when emitted

    @property
    def two_phase(self) -> bool:
        return True

    def title(self) -> str:
        keys = list(self.group_keys)
        local = list(keys)
        for i, (_, agg) in enumerate(self.aggs):
            local.append(f"{agg} AS {partial_name(agg, i)}")
        return f"LocalGroupAggregate({_group_by(keys)}select={_list(local)})"

    def details(self) -> list[str]:
        return []


@exec_node("stream-exec-global-group-aggregate", 1)
@attrs.frozen(eq=False)
class StreamExecGlobalGroupAggregate(StreamExecGroupAggregate):
    """The global phase: the group aggregate operator merging the local phase's partial
    accumulators (its input is a :class:`StreamExecLocalGroupAggregate`)."""

    @property
    def two_phase(self) -> bool:
        return True

    def title(self) -> str:
        keys = list(self.group_keys)
        merged = list(keys)
        for i, (name, agg) in enumerate(self.aggs):
            fn = agg.name.removesuffix("_distinct") if isinstance(agg, Call) else str(agg)
            distinct = (
                "DISTINCT " if isinstance(agg, Call) and agg.name.endswith("_distinct") else ""
            )
            merged.append(f"{fn.upper()}({distinct}{partial_name(agg, i)}) AS {name}")
        return f"GlobalGroupAggregate({_group_by(keys)}select={_list(merged)})"


def partial_name(agg: Expression, i: int) -> str:
    """A partial result's name as Flink shows it: ``sum$0``, ``count1$1`` (COUNT(*))."""
    fn = agg.name.removesuffix("_distinct") if isinstance(agg, Call) else str(agg)
    counts_rows = fn == "count" and str(agg) in ("COUNT(*)", "COUNT(1)", "COUNT()")
    return f"{'count1' if counts_rows else fn}${i}"


def _group_by(keys: list[str]) -> str:
    return f"groupBy={_list(keys)}, " if keys else ""


def _list(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"
