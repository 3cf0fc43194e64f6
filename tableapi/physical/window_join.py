"""The window join's exec nodes (streaming): the window TVFs under it (stateless: each row
once per window, as batch mode assigns them) and server_ext's window join operator, grouped
by the join keys other than the window bounds, each row's window named by its end.

Example::

    >>> from tableapi import TableEnvironment
    >>> from tableapi.physical import StreamingOptions, plan_stream
    >>> env = TableEnvironment.create(mode="streaming")
    >>> for t in ("L", "R"):
    ...     _ = env.execute_sql(f"CREATE TABLE {t} (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts "
    ...         f"AS ts) WITH ('connector' = 'filesystem', 'path' = '/x/{t}', 'format' = 'json')")
    >>> tvf = "(SELECT * FROM TABLE(TUMBLE(TABLE {}, DESCRIPTOR(ts), INTERVAL '5' SECOND)))"
    >>> q = env.sql_query(f"SELECT * FROM {tvf.format('L')} L JOIN {tvf.format('R')} R ON "
    ...     "L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k")
    >>> node = plan_stream(env.optimize(q._plan).plan, StreamingOptions()).root
    >>> node.metadata, node.operator_spec().kind, [i.keys for i in node.operator_inputs()]
    ('stream-exec-window-join_1', 'inner', [('k',), ('k0',)])
"""

from __future__ import annotations

from typing import Any, cast

import attrs

from server_ext.joins import spec as wire
from server_ext.window_join_spec import WindowJoinSpec
from tableapi.errors import ValidationError
from tableapi.physical.base import (
    ExecNode,
    OperatorInput,
    StreamExecOperator,
    Translation,
    exec_node,
)
from tableapi.physical.options import StateBackend
from tableapi.physical.specs import WIRE_KINDS, condition_tree, fields_of
from tableapi.plan import Join
from tableapi.plan.changelog import is_changelog
from tableapi.plan.window_join import JoinWindows
from tableapi.plan.windows import Window, WindowTableFunction
from tableapi.types import TimeKind


@exec_node("stream-exec-window-table-function", 1)
@attrs.frozen(eq=False)
class StreamExecWindowTableFunction(ExecNode):
    """A window TVF under a window join: stateless, each row once per window that holds its
    time (TUMBLE one, HOP and CUMULATE several), with the window's columns."""

    @property
    def window(self) -> Window:
        """The TVF's windows.

        >>> tvfs = [n for n in _example().walk() if isinstance(n, StreamExecWindowTableFunction)]
        >>> [str(n.window) for n in tvfs]
        ['TUMBLE(time_col=[ts], size=[5 s])', 'TUMBLE(time_col=[ts], size=[5 s])']
        """
        return cast(WindowTableFunction, self.logical).window

    @classmethod
    def check(cls, node: Any) -> None:
        if node.window.kind.value == "SESSION":  # as Flink: TVFs joined directly are sliced
            raise ValidationError(
                "A window join of SESSION window TVFs is not supported yet (Flink's window join "
                "reads TUMBLE, HOP or CUMULATE windows); join the TVFs' rows with a regular "
                "join in batch mode, or use those windows."
            )
        time_col = node.window.time_col
        t = node.input.row_type.field(time_col).type
        if t.time_kind is not TimeKind.ROWTIME:
            raise ValidationError(
                f"A window join in streaming mode needs windows over an event-time attribute, "
                f"but {time_col} is {t}: declare a WATERMARK for it."
            )
        if is_changelog(node.input):
            raise ValidationError(
                "Currently, window join only supports INSERT_ONLY in input: "
                f"[{', '.join(sorted(node.input.table_names()))}] is a changelog "
                "(changelog.op-column). Read an append-only table, or join with a regular join."
            )


@exec_node("stream-exec-window-join", 1)
@attrs.frozen(eq=False)
class StreamExecWindowJoin(StreamExecOperator):
    """server_ext's window join operator: per join key, each window's rows of both sides,
    joined (+I) once the watermark passes the window's end; insert-only out."""

    state_backend: StateBackend = StateBackend.HASHMAP

    @property
    def join(self) -> Join:
        return cast(Join, self.logical)

    @property
    def windows(self) -> JoinWindows:
        windows = self.join.window
        assert windows is not None
        return windows

    @classmethod
    def translate(cls, node: Any, t: Translation) -> ExecNode:
        return cls(node, t.inputs, t.traits, t.update_before, t.options.state_backend)

    def _keys(self) -> list[Any]:
        """The equi keys other than the window bounds (the operator's grouping key)."""
        bounds = self.windows.bound_columns
        return [k for k in self.join.equi_keys or () if k.left not in bounds]

    def operator_spec(self) -> WindowJoinSpec:
        """The operator's spec: the kind, both inputs' fields, the keys' null-safety and the
        residual (the window bounds' equalities are the operator's windows).

        >>> spec = _example("LEFT").operator_spec()
        >>> spec.kind, spec.null_safe, spec.residual is None, spec.output_names[:3]
        ('left', (False,), True, ('k', 'ts', 'window_start'))
        """
        join = self.join
        lrow, rrow = join.left.row_type, join.right.row_type
        return WindowJoinSpec(
            kind=WIRE_KINDS[join.kind],
            left=wire.SideSpec(fields_of(lrow)),
            right=wire.SideSpec(fields_of(rrow)),
            null_safe=tuple(k.null_safe for k in self._keys()),
            residual=None if join.residual is None else condition_tree(join.residual, lrow, rrow),
            output_names=join.row_type.names,
        )

    def operator_inputs(self) -> tuple[OperatorInput, ...]:
        """Both inputs grouped by the keys, each row's window named by its ``window_end``
        (``__t``, epoch ms).

        >>> [(i.keys, i.time) for i in _example().operator_inputs()]
        [(('k',), 'window_end'), (('k0',), 'window_end0')]
        """
        keys, windows = self._keys(), self.windows
        left, right = self.inputs
        return (
            OperatorInput(left, tuple(k.left for k in keys), windows.left_bounds[1]),
            OperatorInput(right, tuple(k.right for k in keys), windows.right_bounds[1]),
        )

    @property
    def timed(self) -> bool:
        return True

    def details(self) -> list[str]:
        """What explain adds to the WindowJoin line.

        >>> _example().details()
        ['operator=[server_ext window join]', 'stateBackend=[hashmap]']
        """
        return [
            "operator=[server_ext window join]",
            f"stateBackend=[{self.state_backend.value}]",
        ]


def check_window_join(node: Join) -> None:
    """Refuse in streaming a join of window TVFs that is not a window join (Flink runs it as
    a regular join, which needs the TVF's rows on their own: not supported yet in streaming),
    naming what makes it one.

    >>> check_window_join(_example().join)  # a window join: nothing to refuse
    """
    from tableapi.rules.window_joins import window_bounds

    left, right = window_bounds(node.left), window_bounds(node.right)
    if node.window is not None or left is None or right is None:
        return
    raise ValidationError(
        f"This join of two window TVFs ({left[0]} and {right[0]}) is not a window join: a "
        "window join needs the same windows on both sides and a condition that equates both "
        "sides' window_start and window_end (ON L.window_start = R.window_start AND "
        "L.window_end = R.window_end AND ...). Flink runs any other join of them as a regular "
        "join, which is not supported yet over window TVFs in streaming mode (batch mode runs "
        "it)."
    )


def _example(kind: str = "") -> StreamExecWindowJoin:
    """The docstrings' window join: ``L [kind] JOIN R`` of 5 s TUMBLE windows on ``k``."""
    from tableapi.expressions import col
    from tableapi.physical.options import StreamingOptions
    from tableapi.physical.planner import plan_stream
    from tableapi.plan import FileSource, JoinKind, Project, Scan
    from tableapi.plan.windows import WindowKind
    from tableapi.rules import optimize
    from tableapi.types import STRING, DataType, RowType

    rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    row = RowType.of(("k", STRING), ("ts", rowtime))
    window = Window(WindowKind.TUMBLE, "ts", 5000)
    left = WindowTableFunction(Scan("L", FileSource("/x/L", "json"), row), window)
    tvf = WindowTableFunction(Scan("R", FileSource("/x/R", "json"), row), window)
    names = tvf.row_type.names
    right = Project(tvf, tuple(col(n) for n in names), tuple(f"{n}0" for n in names))
    on = (
        (col("window_start") == col("window_start0"))
        & (col("window_end") == col("window_end0"))
        & (col("k") == col("k0"))
    )
    kinds = {"": JoinKind.INNER, "LEFT": JoinKind.LEFT, "FULL": JoinKind.FULL}
    plan = optimize(Join(left, right, kinds[kind], on)).plan
    return cast(StreamExecWindowJoin, plan_stream(plan, StreamingOptions()).root)


__all__ = ["StreamExecWindowJoin", "StreamExecWindowTableFunction", "check_window_join"]
