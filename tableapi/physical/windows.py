"""The window aggregate exec nodes (streaming): server_ext's window aggregate operator,
grouped by the aggregation's keys, windows assigned (sliced) in the operator; in one phase
(``StreamExecWindowAggregate``) or two (``StreamExecLocalWindowAggregate`` under
``StreamExecGlobalWindowAggregate``, as Flink's TwoStageOptimizedWindowAggregateRule makes
them: :func:`window_two_phase`), decided once here.

Example::

    >>> from tableapi.plan import FileSource, Scan
    >>> from tableapi.plan.windows import Window, WindowAggregate, WindowKind
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> from tableapi.expressions import col
    >>> from tableapi.physical import StreamingOptions, plan_stream
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> t = Scan("T", FileSource("/t", "json"), RowType.of(("k", BIGINT), ("ts", rowtime)))
    >>> agg = WindowAggregate(t, Window(WindowKind.TUMBLE, "ts", 1000),
    ...                       ("window_start", "window_end", "k"), (("n", col("k").count),))
    >>> node = plan_stream(agg, StreamingOptions()).root
    >>> node.metadata, node.operator_spec().columns, node.input.metadata
    ('stream-exec-global-window-aggregate_1', ('window_start', 'window_end', 'key0', 'agg0'), \
'stream-exec-local-window-aggregate_1')
    >>> from tableapi.physical.options import AggPhaseStrategy
    >>> one = StreamingOptions(agg_phase_strategy=AggPhaseStrategy.ONE_PHASE)
    >>> plan_stream(agg, one).root.metadata
    'stream-exec-window-aggregate_1'
"""

from __future__ import annotations

import re
from typing import Any, cast

import attrs

from server_ext.window_spec import WindowAggregateSpec
from tableapi.errors import ValidationError
from tableapi.expressions import Call
from tableapi.physical.aggregates import mergeable, partial_name
from tableapi.physical.base import (
    ExecNode,
    OperatorInput,
    StreamExecOperator,
    Translation,
    exec_node,
    translates,
)
from tableapi.physical.options import AggPhaseStrategy, StateBackend, StreamingOptions
from tableapi.physical.specs import aggregate_calls
from tableapi.physical.window_join import StreamExecWindowTableFunction
from tableapi.plan.changelog import ChangelogMode, ChangelogTraits, is_changelog
from tableapi.plan.windows import (
    WINDOW_COLUMNS,
    WindowAggregate,
    WindowKind,
    WindowTableFunction,
    sliceable,
    unsliceable_message,
)
from tableapi.types import TimeKind


@exec_node("stream-exec-window-aggregate", 1, implements=(WindowAggregate,))
@attrs.frozen(eq=False)
class StreamExecWindowAggregate(StreamExecOperator):
    """server_ext's window aggregate operator: per key, each slice's accumulators, a window's
    merged and emitted once (+I) when the watermark (a proctime window: the server's clock)
    passes the window's end; insert-only out, over an insert-only or (event-time TUMBLE, HOP,
    CUMULATE) a changelog input."""

    state_backend: StateBackend = StateBackend.HASHMAP

    @property
    def aggregate(self) -> WindowAggregate:
        return cast(WindowAggregate, self.logical)

    @classmethod
    def check(cls, node: Any) -> None:
        time_col = node.window.time_col
        t = node.input.row_type.field(time_col).type
        sliced = node.window.kind is not WindowKind.SESSION and t.time_kind is TimeKind.ROWTIME
        if is_changelog(node.input) and not sliced:
            what = "SESSION" if node.window.kind is WindowKind.SESSION else "processing-time"
            raise ValidationError(
                f"A {what} window aggregation over a changelog input "
                f"[{', '.join(sorted(node.input.table_names()))}] is not supported yet; "
                "event-time TUMBLE, HOP and CUMULATE windows take one (as in Flink 1.19+), or "
                "read an append-only table."
            )
        if t.time_kind is None:
            raise ValidationError(
                f"A window in streaming mode needs a time attribute, but {time_col} is {t}: "
                "declare a WATERMARK for it (event time), or window a PROCTIME() column."
            )

    @classmethod
    def translate(cls, node: Any, t: Translation) -> ExecNode:
        backend = t.options.state_backend
        if not window_two_phase(node, t.options):
            return cls(node, t.inputs, t.traits, t.update_before, backend)
        partials = ChangelogTraits(ChangelogMode.INSERT_ONLY)
        local = StreamExecLocalWindowAggregate(node, t.inputs, partials, False, backend)
        return StreamExecGlobalWindowAggregate(node, (local,), t.traits, t.update_before, backend)

    @property
    def two_phase(self) -> bool:
        """Does the operator merge a local phase's partial accumulators?"""
        return False

    @property
    def retractions(self) -> bool:
        """Is the input a changelog (its calls are Flink's ``*_RETRACT`` functions)?"""
        return is_changelog(self.aggregate.input)

    def title(self) -> str:
        return _retracting(super().title()) if self.retractions else super().title()

    def _calls(self) -> tuple[list[Any], list[Any]]:
        node = self.aggregate
        return aggregate_calls(node, node.keys, node.aggs)

    def operator_spec(self) -> WindowAggregateSpec:
        node = self.aggregate
        columns, calls = self._calls()
        keys = node.keys
        out = [k if k in WINDOW_COLUMNS else f"key{keys.index(k)}" for k in node.group_keys]
        out += [f"agg{i}" for i in range(len(calls))]
        window = node.window
        return WindowAggregateSpec(
            input=tuple((n, t.spark_ddl) for n, _, t in columns),
            key_count=len(keys),
            aggs=tuple(calls),
            window=window.kind.value.lower(),
            size_ms=window.size_ms,
            step_ms=window.step_ms,
            offset_ms=window.offset_ms,
            columns=tuple(out),
            output_names=node.row_type.names,
            proctime=self.proctime,
            two_phase=self.two_phase,
            retractions=self.retractions,
        )

    @property
    def waits_for_watermark(self) -> bool:
        # a proctime window waits for the clock: the end of a bounded input fires none of
        # them (as in Flink, whose bounded job ends first)
        return not self.proctime

    @property
    def proctime(self) -> bool:
        """Windows by the server's clock (the time column is a PROCTIME attribute)."""
        node = self.aggregate
        time = node.input.row_type.field(node.window.time_col).type
        return time.time_kind is TimeKind.PROCTIME

    def operator_inputs(self) -> tuple[OperatorInput, ...]:
        """The input grouped by the keys, with its rowtime (``__t``) and each call's argument
        computed before the shuffle (the keys' fields NULL: they travel in ``__k0..``)."""
        columns, _ = self._calls()
        node = self.aggregate
        count = len(node.keys)
        row = tuple((n, None if i < count else e, t) for i, (n, e, t) in enumerate(columns))
        time = None if self.proctime else node.window.time_col  # by the clock: no __t
        return (OperatorInput(self.input, node.keys, time, row),)

    def details(self) -> list[str]:
        return [
            "operator=[server_ext window aggregate]",
            f"stateBackend=[{self.state_backend.value}]",
        ]


def window_two_phase(node: WindowAggregate, options: StreamingOptions) -> bool:
    """Does the window aggregation run in two phases (Flink's
    TwoStageOptimizedWindowAggregateRule): ``table.optimizer.agg-phase-strategy`` not
    ``ONE_PHASE`` (mini-batch plays no part: the local phase folds a micro-batch), an
    event-time TUMBLE, HOP or CUMULATE window (not SESSION, not processing time), and every
    aggregate function mergeable (DISTINCT ones too: their value counts merge). Each task then
    folds its rows into one partial accumulator per key and slice before the shuffle: a global
    window aggregate (no keys) no longer runs every row on one core.

    >>> from tableapi.plan import FileSource, Scan
    >>> from tableapi.plan.windows import Window
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> from tableapi.expressions import col
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> t = Scan("T", FileSource("/t", "json"), RowType.of(("v", BIGINT), ("ts", rowtime)))
    >>> agg = WindowAggregate(t, Window(WindowKind.TUMBLE, "ts", 1000),
    ...                       ("window_start", "window_end"), (("m", col("v").max),))
    >>> window_two_phase(agg, StreamingOptions())
    True
    >>> window_two_phase(agg, StreamingOptions(agg_phase_strategy=AggPhaseStrategy.ONE_PHASE))
    False
    """
    if options.agg_phase_strategy is AggPhaseStrategy.ONE_PHASE:
        return False
    window = node.window
    time = node.input.row_type.field(window.time_col).type
    if window.kind is WindowKind.SESSION or time.time_kind is not TimeKind.ROWTIME:
        return False
    return mergeable(node.aggs)


_PROPERTIES = {"window_start": "start", "window_end": "end", "window_time": "rowtime"}


@exec_node("stream-exec-local-window-aggregate", 1)
@attrs.frozen(eq=False)
class StreamExecLocalWindowAggregate(StreamExecWindowAggregate):
    """The local phase (Flink's LocalWindowAggregate): each task folds its rows of a
    micro-batch into one partial accumulator per key and slice before the shuffle
    (insert-only partials, in any order; the plugin's ``local_window_aggregate``)."""

    @property
    def stateful(self) -> bool:
        return False  # one micro-batch's partials, dropped when emitted

    @property
    def waits_for_watermark(self) -> bool:
        return False

    @property
    def two_phase(self) -> bool:
        return True

    def title(self) -> str:
        node = self.aggregate
        select = [*node.keys]
        select += [
            f"{'COUNT(*)' if str(agg) == 'COUNT()' else agg} AS {partial_name(agg, i)}"
            for i, (_, agg) in enumerate(node.aggs)
        ]
        select.append("slice_end('w$) AS $slice_end")
        text = f"LocalWindowAggregate({_group_by(node.keys)}window=[{node.window}], " + (
            f"select=[{', '.join(select)}])"
        )
        return _retracting(text) if self.retractions else text

    def details(self) -> list[str]:
        return []


@exec_node("stream-exec-global-window-aggregate", 1)
@attrs.frozen(eq=False)
class StreamExecGlobalWindowAggregate(StreamExecWindowAggregate):
    """The global phase (Flink's GlobalWindowAggregate): the window aggregate operator merging
    the local phase's partials into its slices (its input is a
    :class:`StreamExecLocalWindowAggregate`)."""

    @property
    def two_phase(self) -> bool:
        return True

    def title(self) -> str:
        node = self.aggregate
        select = [*node.keys]
        for i, (name, agg) in enumerate(node.aggs):
            fn = agg.name.removesuffix("_distinct") if isinstance(agg, Call) else str(agg)
            distinct = "DISTINCT " if fn != getattr(agg, "name", fn) else ""
            select.append(f"{fn.upper()}({distinct}{partial_name(agg, i)}) AS {name}")
        select += [f"{_PROPERTIES[k]}('w$) AS {k}" for k in node.group_keys if k in _PROPERTIES]
        window = str(node.window).replace(
            f"time_col=[{node.window.time_col}]", "slice_end=[$slice_end]"
        )
        text = f"GlobalWindowAggregate({_group_by(node.keys)}window=[{window}], " + (
            f"select=[{', '.join(select)}])"
        )
        return _retracting(text) if self.retractions else text


def _retracting(text: str) -> str:
    """An explain line's calls as Flink names them over a changelog input
    (``COUNT_RETRACT(*)``, ``SUM_RETRACT(v)``).

    >>> _retracting("WindowAggregate(select=[k, COUNT(*) AS n, MAX(v) AS m])")
    'WindowAggregate(select=[k, COUNT_RETRACT(*) AS n, MAX_RETRACT(v) AS m])'
    """
    return re.sub(r"\b(COUNT|SUM|AVG|MIN|MAX)\(", r"\1_RETRACT(", text)


def _group_by(keys: tuple[str, ...]) -> str:
    return f"groupBy=[{', '.join(keys)}], " if keys else ""


def _standalone_tvf(node: WindowTableFunction) -> None:
    if node.under_window_operator:
        return StreamExecWindowTableFunction.check(node)
    if not sliceable(node.window):
        raise ValidationError(unsliceable_message(node.window))
    if node.window.kind is WindowKind.SESSION:
        raise ValidationError(
            "A SESSION window TVF in streaming mode runs only as a window aggregation grouped "
            f"by window_start, window_end and its PARTITION BY keys "
            f"[{', '.join(node.window.partition)}], whose calls read the input's columns; its "
            "rows on their own, another grouping, or another operator over it are not "
            "supported yet in streaming mode (batch mode runs them)."
        )
    raise ValidationError(
        f"A window TVF ({node.window.kind.value}) in streaming mode runs only as a window "
        "aggregation (GROUP BY window_start, window_end, ...) whose calls read the input's "
        "columns; its rows on their own, or under another operator, are not supported yet in "
        "streaming mode (batch mode runs them)."
    )


@translates(WindowTableFunction, check=_standalone_tvf)
def _window_tvf(node: WindowTableFunction, t: Translation) -> ExecNode:
    if node.under_window_operator:
        return StreamExecWindowTableFunction.translate(node, t)
    raise ValidationError("internal: a streaming window TVF is refused by its check")
