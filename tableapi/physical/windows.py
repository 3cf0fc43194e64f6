"""The window aggregate exec node (streaming): server_ext's window aggregate operator over
an insert-only input, grouped by the aggregation's keys, windows assigned in the operator.

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
    >>> node.metadata, node.operator_spec().columns
    ('stream-exec-window-aggregate_1', ('window_start', 'window_end', 'key0', 'agg0'))
"""

from __future__ import annotations

from typing import Any, cast

import attrs

from server_ext.window_spec import WindowAggregateSpec
from tableapi.errors import ValidationError
from tableapi.physical.base import (
    ExecNode,
    OperatorInput,
    StreamExecOperator,
    Translation,
    exec_node,
    translates,
)
from tableapi.physical.options import StateBackend
from tableapi.physical.specs import aggregate_calls
from tableapi.physical.window_join import StreamExecWindowTableFunction
from tableapi.plan.changelog import is_changelog
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
    """server_ext's window aggregate operator: per key, each window's accumulators, emitted
    once (+I) when the watermark (a proctime window: the server's clock) passes the window's
    end; insert-only out."""

    state_backend: StateBackend = StateBackend.HASHMAP

    @property
    def aggregate(self) -> WindowAggregate:
        return cast(WindowAggregate, self.logical)

    @classmethod
    def check(cls, node: Any) -> None:
        if is_changelog(node.input):
            raise ValidationError(
                "A window aggregation over a changelog input "
                f"[{', '.join(sorted(node.input.table_names()))}] is not supported yet (Flink "
                "1.19+ accepts updates there); read an append-only table."
            )
        time_col = node.window.time_col
        t = node.input.row_type.field(time_col).type
        if t.time_kind is None:
            raise ValidationError(
                f"A window in streaming mode needs a time attribute, but {time_col} is {t}: "
                "declare a WATERMARK for it (event time), or window a PROCTIME() column."
            )

    @classmethod
    def translate(cls, node: Any, t: Translation) -> ExecNode:
        return cls(node, t.inputs, t.traits, t.update_before, t.options.state_backend)

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


def _standalone_tvf(node: WindowTableFunction) -> None:
    if node.joined:
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
    if node.joined:
        return StreamExecWindowTableFunction.translate(node, t)
    raise ValidationError("internal: a streaming window TVF is refused by its check")
