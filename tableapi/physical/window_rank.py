"""The window Top-N / window deduplication exec node (streaming): server_ext's window rank
operator over a window TVF's rows (the TVF stateless below it) or a window aggregation's,
grouped by the partition keys other than the window bounds, each row's window named by its
``window_end``.

Example::

    >>> node = _example("rn <= 2")
    >>> node.metadata, node.operator_spec().rank_end, [i.keys for i in node.operator_inputs()]
    ('stream-exec-window-rank_1', 2, [('k',)])
"""

from __future__ import annotations

from typing import Any, cast

import attrs

from server_ext.window_rank_spec import WindowRankSpec
from tableapi.errors import ValidationError
from tableapi.physical.base import (
    ExecNode,
    OperatorInput,
    StreamExecOperator,
    Translation,
    exec_node,
)
from tableapi.physical.options import StateBackend
from tableapi.physical.specs import fields_of
from tableapi.plan.changelog import is_changelog
from tableapi.plan.window_rank import WindowRank, windowed_input
from tableapi.plan.windows import WindowAggregate, WindowKind, WindowTableFunction
from tableapi.types import TimeKind


@exec_node("stream-exec-window-rank", 1, implements=(WindowRank,))
@attrs.frozen(eq=False)
class StreamExecWindowRank(StreamExecOperator):
    """server_ext's window rank operator: per partition key, each window's best rows,
    numbered and emitted (+I) once the watermark passes the window's end; insert-only out.
    Flink's WindowDeduplicate when the rank is a deduplication (explain names it so)."""

    state_backend: StateBackend = StateBackend.HASHMAP

    @property
    def rank(self) -> WindowRank:
        return cast(WindowRank, self.logical)

    @classmethod
    def check(cls, node: Any) -> None:
        if node.rank_end is None:
            raise ValidationError(
                "ROW_NUMBER() OVER (PARTITION BY window_start, window_end, ...) in streaming "
                "mode runs as a window Top-N: keep its first rows with WHERE rn <= N (or rn = "
                "1) in the enclosing query; numbering every row is not supported in streaming "
                "mode (batch mode runs it)."
            )
        found = windowed_input(node.input)
        assert found is not None  # the node validates it
        window, _, over_tvf = found
        if is_changelog(node.input):
            raise ValidationError(
                "A window Top-N over a changelog input "
                f"[{', '.join(sorted(node.input.table_names()))}] is not supported (Flink's "
                "window rank takes insert-only input); read an append-only table."
            )
        if over_tvf and window.kind is WindowKind.SESSION:
            raise ValidationError(
                "A window Top-N or deduplication right over a SESSION window TVF is not "
                "supported (as in Flink); rank a window aggregation's rows, or use TUMBLE, "
                "HOP or CUMULATE."
            )
        time = _time_attribute(node, window.time_col, over_tvf)
        if time is not TimeKind.ROWTIME:
            raise ValidationError(
                f"A window Top-N in streaming mode needs windows over an event-time attribute, "
                f"but {window.time_col} is not one: declare a WATERMARK for it."
            )

    @classmethod
    def translate(cls, node: Any, t: Translation) -> ExecNode:
        return cls(node, t.inputs, t.traits, t.update_before, t.options.state_backend)

    def operator_spec(self) -> WindowRankSpec:
        """The operator's spec: the input's fields, the sort keys by index, the range.

        >>> spec = _example("rn = 1", "ts DESC").operator_spec()
        >>> spec.order, spec.keep_last, spec.fired_input, spec.output_names[-1]
        (((2, False),), True, False, 'w0$o0')
        """
        node = self.rank
        row = node.input.row_type
        assert node.rank_end is not None
        return WindowRankSpec(
            input=fields_of(row),
            order=tuple((row.index(c), asc) for c, asc in node.order),
            rank_end=node.rank_end,
            rank_start=node.rank_start,
            output_rank=node.output_rank,
            keep_last=node.deduplicate and not node.order[0][1],
            fired_input=not node.over_tvf,
            output_names=node.row_type.names,
        )

    def operator_inputs(self) -> tuple[OperatorInput, ...]:
        """The input grouped by the partition keys, each row's window named by its
        ``window_end`` (``__t``, epoch ms).

        >>> [(i.keys, i.time) for i in _example("rn <= 2").operator_inputs()]
        [(('k',), 'window_end')]
        """
        node = self.rank
        return (OperatorInput(self.input, node.keys, node.bounds[1]),)

    @property
    def timed(self) -> bool:
        return True

    def details(self) -> list[str]:
        """What explain adds to the WindowRank line.

        >>> _example("rn <= 2").details()
        ['operator=[server_ext window rank]', 'stateBackend=[hashmap]']
        """
        return ["operator=[server_ext window rank]", f"stateBackend=[{self.state_backend.value}]"]


def _time_attribute(node: WindowRank, time_col: str, over_tvf: bool) -> TimeKind | None:
    """The kind of time the input's windows run on: the type of the time column of the
    window TVF (or window aggregation) below, in its own input."""
    for n in node.input.walk():
        if isinstance(n, WindowTableFunction | WindowAggregate):
            return n.input.row_type.field(time_col).type.time_kind
    return None


def _example(where: str, order: str = "v DESC") -> StreamExecWindowRank:
    """The docstrings' window Top-N: per 10 s TUMBLE window and ``k``, ordered by ``order``."""
    from tableapi.expressions import col
    from tableapi.physical.options import StreamingOptions
    from tableapi.physical.planner import plan_stream
    from tableapi.plan import FileSource, Filter, Scan
    from tableapi.plan.window_rank import RANK_COLUMN
    from tableapi.plan.windows import Window
    from tableapi.rules import optimize
    from tableapi.types import INT, STRING, DataType, RowType

    rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    row = RowType.of(("k", STRING), ("v", INT), ("ts", rowtime))
    tvf = WindowTableFunction(
        Scan("E", FileSource("/x/E", "json"), row), Window(WindowKind.TUMBLE, "ts", 10_000)
    )
    column, direction = order.split()
    rank = WindowRank(tvf, ("window_start", "window_end", "k"), ((column, direction == "ASC"),))
    op, n = where.split()[1], int(where.split()[2])
    rn = col(RANK_COLUMN)
    condition = rn <= n if op == "<=" else rn == n
    plan = optimize(Filter(rank, condition)).plan
    return cast(StreamExecWindowRank, plan_stream(plan, StreamingOptions()).root)


__all__ = ["StreamExecWindowRank"]
