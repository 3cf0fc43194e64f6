"""Join exec nodes (streaming): regular, interval, temporal and multi-way joins, each with
the decisions it runs by: Spark's own join or server_ext's operator, the state layout and
TTL of each input, the time bounds.

Example::

    >>> from tableapi.plan import ElementsSource, FileSource, Join, JoinKind, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> from tableapi.expressions import col
    >>> from tableapi.rules import optimize
    >>> from tableapi.physical import StreamingOptions, plan_stream
    >>> a = Scan("A", FileSource("/a", "json"), RowType.of(("a", BIGINT)))
    >>> b = Scan("B", FileSource("/b", "json"), RowType.of(("b", BIGINT)))
    >>> left = optimize(Join(a, b, JoinKind.LEFT, col("a") == col("b"))).plan
    >>> node = plan_stream(left, StreamingOptions()).root
    >>> node.strategy.value, node.left.input_spec, node.left.ttl_ms
    ('operator', 'NoUniqueKey', None)
"""

from __future__ import annotations

from enum import Enum
from typing import Any, cast

import attrs

from server_ext.joins.interval_spec import IntervalSpec
from server_ext.joins.multi_spec import MultiJoinSpec
from server_ext.joins.spec import JoinSpec
from server_ext.joins.temporal_spec import TemporalSpec
from tableapi.durations import parse_duration_ms
from tableapi.errors import ValidationError
from tableapi.expressions import conjuncts
from tableapi.physical.base import (
    ExecNode,
    OperatorInput,
    StreamExecOperator,
    Translation,
    exec_node,
)
from tableapi.physical.options import StateBackend, StreamingOptions
from tableapi.physical.specs import (
    interval_join_spec,
    join_spec,
    multi_join_spec,
    temporal_join_spec,
)
from tableapi.physical.window_join import StreamExecWindowJoin, check_window_join
from tableapi.plan import IntervalBounds, Join, JoinKind, MultiJoin, TemporalJoin
from tableapi.plan.changelog import (
    ChangelogMode,
    changelog_mode,
    input_spec,
    is_changelog,
    unique_key_for_state,
)
from tableapi.plan.explain import join_text


class JoinStrategy(str, Enum):
    """How a streaming join runs."""

    NATIVE = "native"  # Spark's own stream-stream join
    OPERATOR = "operator"  # a server_ext operator


@attrs.frozen
class JoinInput:
    """One input of a join operator: its state layout (Flink's JoinInputSideSpec), the
    unique key it keeps its state by (none for ``NoUniqueKey``) and its state TTL."""

    input_spec: str = "NoUniqueKey"
    unique_key: tuple[str, ...] = ()
    ttl_ms: int | None = None


def state_ttl_ms(join: Join, side: str, default_ms: int | None) -> int | None:
    """State retention of one join input: its STATE_TTL hint, else ``table.exec.state.ttl``."""
    for hint, hint_side in join.hints:
        if hint.name == "STATE_TTL" and hint_side == side:
            options = dict(hint.options)
            ttl = parse_duration_ms(options[hint.tables[0]], f"STATE_TTL of {hint.tables[0]}")
            return ttl or None  # Flink: 0 means no TTL
    return default_ms


def _join_input(join: Join, side: str, keys: tuple[str, ...], default_ttl: int | None) -> JoinInput:
    child = join.left if side == "left" else join.right
    layout = input_spec(child, keys)
    unique = unique_key_for_state(child) if layout != "NoUniqueKey" else ()
    return JoinInput(layout, unique, state_ttl_ms(join, side, default_ttl))


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


def _native(join: Join, options: StreamingOptions, left: JoinInput, right: JoinInput) -> bool:
    """Run Spark's own stream-stream join: asked for (``table.exec.join.spark-native.enabled``)
    or the only join the server has (no JVM plugin), and it has Flink's semantics here: an
    inner join of insert-only inputs on equi keys, without state TTL."""
    return (
        (options.native_joins or options.jvm_plugin is False)
        and join.kind is JoinKind.INNER
        and bool(join.equi_keys)
        and not _residual_on_keys_only(join)
        and changelog_mode(join.left) is ChangelogMode.INSERT_ONLY
        and changelog_mode(join.right) is ChangelogMode.INSERT_ONLY
        and left.ttl_ms is None
        and right.ttl_ms is None
    )


@exec_node("stream-exec-join", 1, implements=(Join,))
@attrs.frozen(eq=False)
class StreamExecJoin(StreamExecOperator):
    """A regular join: Spark's own stream-stream join (``NATIVE``) where its semantics are
    Flink's, else server_ext's join operator with each input's state layout and TTL."""

    strategy: JoinStrategy = JoinStrategy.OPERATOR
    left: JoinInput = JoinInput()
    right: JoinInput = JoinInput()
    state_backend: StateBackend = StateBackend.HASHMAP

    @property
    def join(self) -> Join:
        return cast(Join, self.logical)

    @property
    def stateful(self) -> bool:
        return self.strategy is JoinStrategy.OPERATOR

    @property
    def waits_for_watermark(self) -> bool:
        return False  # a regular join emits as rows arrive; its timers only expire state (TTL)

    @classmethod
    def check(cls, node: Any) -> None:
        if node.interval is not None:
            StreamExecIntervalJoin.check(node)
        check_window_join(node)

    def title(self) -> str:
        return join_text(self.join, (self.left.input_spec, self.right.input_spec))

    def operator_spec(self) -> JoinSpec:
        return join_spec(self)

    def operator_inputs(self) -> tuple[OperatorInput, ...]:
        return _two_inputs(self.join, self.inputs, None)

    @classmethod
    def translate(cls, node: Any, t: Translation) -> ExecNode:
        join = cast(Join, node)
        if join.interval is not None:
            return StreamExecIntervalJoin.translate(join, t)
        if join.window is not None:
            return StreamExecWindowJoin.translate(join, t)
        keys = join.equi_keys or ()
        ttl = t.options.default_ttl_ms
        left = _join_input(join, "left", tuple(k.left for k in keys), ttl)
        right = _join_input(join, "right", tuple(k.right for k in keys), ttl)
        native = _native(join, t.options, left, right)
        strategy = JoinStrategy.NATIVE if native else JoinStrategy.OPERATOR
        backend = t.options.state_backend
        return cls(node, t.inputs, t.traits, t.update_before, strategy, left, right, backend)

    def details(self) -> list[str]:
        operator = "server_ext join processor" if self.stateful else "spark stream-stream join"
        extra = [f"operator=[{operator}]", f"stateBackend=[{self.state_backend.value}]"]
        for side, spec in (("left", self.left), ("right", self.right)):
            if spec.ttl_ms is not None:
                extra.append(f"{side}StateTtl=[{spec.ttl_ms} ms]")
        return extra


@exec_node("stream-exec-interval-join", 1)
@attrs.frozen(eq=False)
class StreamExecIntervalJoin(StreamExecOperator):
    """An interval join (time-bounded): server_ext's interval operator, inner and outer. Spark's
    own stream-stream join gives an inner one's pairs too, but took 2.4x the operator's engine
    time (bench/interval_join.py, 200k x 200k) and 2.2x in Nexmark's q7; for outer ones it never
    pads an outer row whose residual fails, and drops outer rows with a NULL key
    (docs/architecture.md)."""

    bounds: IntervalBounds | None = None
    state_backend: StateBackend = StateBackend.HASHMAP

    @property
    def join(self) -> Join:
        return cast(Join, self.logical)

    @property
    def waits_for_watermark(self) -> bool:
        # An outer row is padded once the watermark passes its bounds; inner pairs are emitted
        # as they meet.
        return self.join.kind is not JoinKind.INNER

    @classmethod
    def check(cls, node: Any) -> None:
        for side in (node.left, node.right):
            if is_changelog(side):
                raise ValidationError(
                    f"An interval join needs insert-only inputs, but "
                    f"[{', '.join(sorted(side.table_names()))}] is a changelog "
                    "(changelog.op-column). Join it with a regular join, or read an "
                    "append-only table."
                )

    @classmethod
    def translate(cls, node: Any, t: Translation) -> ExecNode:
        join = cast(Join, node)
        backend = t.options.state_backend
        return cls(node, t.inputs, t.traits, t.update_before, join.interval, backend)

    def operator_spec(self) -> IntervalSpec:
        return interval_join_spec(self.join)

    def operator_inputs(self) -> tuple[OperatorInput, ...]:
        bounds = self.bounds
        assert bounds is not None
        return _two_inputs(self.join, self.inputs, (bounds.left_time, bounds.right_time))

    def details(self) -> list[str]:
        operator = "server_ext interval join processor"
        return [f"operator=[{operator}]", f"stateBackend=[{self.state_backend.value}]"]


@exec_node("stream-exec-temporal-join", 1, implements=(TemporalJoin,))
@attrs.frozen(eq=False)
class StreamExecTemporalJoin(StreamExecOperator):
    """server_ext's temporal join operator (event or processing time); the versioned
    (right) table keeps its versions by its primary key."""

    state_backend: StateBackend = StateBackend.HASHMAP

    @property
    def join(self) -> TemporalJoin:
        return cast(TemporalJoin, self.logical)

    def operator_spec(self) -> TemporalSpec:
        return temporal_join_spec(self.join)

    def operator_inputs(self) -> tuple[OperatorInput, ...]:
        """The probe rows at their ``as_of`` time; the versions at their time (none for a
        processing-time join); a changelog of versions read as upserts: +U opens the new
        version, and its -U (stamped with the old version's time) would wrongly close the
        old one."""
        join = self.join
        keys = join.equi_keys
        if keys is None:
            raise ValidationError("compile the optimized plan: join conditions are not split")
        left, right = self.inputs
        right_time = join.right_time if join.time == "event" else None
        return (
            OperatorInput(left, tuple(k.left for k in keys), join.as_of),
            OperatorInput(right, tuple(k.right for k in keys), right_time, upserts=True),
        )

    @property
    def timed(self) -> bool:
        return True

    @classmethod
    def check(cls, node: Any) -> None:
        if is_changelog(node.left):
            raise ValidationError(
                "The probe (left) side of a temporal join must be insert-only; "
                f"[{', '.join(sorted(node.left.table_names()))}] is a changelog."
            )

    @classmethod
    def translate(cls, node: Any, t: Translation) -> ExecNode:
        return cls(node, t.inputs, t.traits, t.update_before, t.options.state_backend)

    def details(self) -> list[str]:
        return [
            "operator=[server_ext temporal join processor]",
            f"stateBackend=[{self.state_backend.value}]",
        ]


@exec_node("stream-exec-multi-join", 1, implements=(MultiJoin,))
@attrs.frozen(eq=False)
class StreamExecMultiJoin(StreamExecOperator):
    """server_ext's multi-way join operator: every input in one operator, by the common
    join key; ``ttl_ms``: the state TTL of every input."""

    ttl_ms: int | None = None
    state_backend: StateBackend = StateBackend.HASHMAP

    @property
    def join(self) -> MultiJoin:
        return cast(MultiJoin, self.logical)

    @property
    def waits_for_watermark(self) -> bool:
        return False  # regular joins: rows are emitted as they meet

    def operator_spec(self) -> MultiJoinSpec:
        return multi_join_spec(self.join, self.ttl_ms)

    def operator_inputs(self) -> tuple[OperatorInput, ...]:
        """Every input, grouped by the common join key."""
        return tuple(
            OperatorInput(child, keys)
            for child, keys in zip(self.inputs, self.join.common_key, strict=True)
        )

    @classmethod
    def translate(cls, node: Any, t: Translation) -> ExecNode:
        ttl, backend = t.options.default_ttl_ms, t.options.state_backend
        return cls(node, t.inputs, t.traits, t.update_before, ttl, backend)

    def details(self) -> list[str]:
        extra = [
            "operator=[server_ext multi-way join processor]",
            f"stateBackend=[{self.state_backend.value}]",
        ]
        if self.ttl_ms is not None:
            extra.append(f"stateTtl=[{self.ttl_ms} ms]")
        return extra


def _two_inputs(
    join: Join, inputs: tuple[ExecNode, ...], times: tuple[str, str] | None
) -> tuple[OperatorInput, ...]:
    """A two-input join's inputs, grouped by the equi key (an interval join's with each
    side's rowtime: ``times``). A NULL key stays: the grouping keeps it."""
    keys = join.equi_keys or ()
    left, right = inputs
    ltime, rtime = times if times else (None, None)
    return (
        OperatorInput(left, tuple(k.left for k in keys), ltime),
        OperatorInput(right, tuple(k.right for k in keys), rtime),
    )
