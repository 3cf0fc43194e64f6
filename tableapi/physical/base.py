"""The base of exec nodes: one immutable node per physical operator, holding the decisions
made for it once, when the physical plan is built (``planner.plan_stream``).

Each exec node names and versions itself as Flink's ``@ExecNodeMetadata`` does
(:func:`exec_node`), so that a plan can later travel by name and version; it keeps the
optimized logical node it implements (its row type and expressions), its inputs' exec nodes,
its changelog traits and whether its consumers need its -U rows.

Example::

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> from tableapi.physical import StreamingOptions, plan_stream
    >>> from tableapi.plan import FileSource
    >>> scan = Scan("T", FileSource("/t", "json"), RowType.of(("a", BIGINT)))
    >>> node = plan_stream(scan, StreamingOptions()).root
    >>> node.metadata, node.row_type.names
    ('stream-exec-table-source-scan_1', ('a',))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar, TypeVar

import attrs

from tableapi.expressions import Expression
from tableapi.physical.options import StreamingOptions
from tableapi.plan.base import PlanNode
from tableapi.plan.changelog import ChangelogMode, ChangelogTraits
from tableapi.types import DataType, Field, RowType

#: Exec node classes by name (``stream-exec-join``): what a plan read back by name finds.
EXEC_NODES: dict[str, type[ExecNode]] = {}


@attrs.frozen
class Translation:
    """What translating one logical node has at hand: its inputs' exec nodes, its changelog
    traits, whether its consumers need its -U rows, and the options."""

    inputs: tuple[ExecNode, ...]
    traits: ChangelogTraits
    update_before: bool
    options: StreamingOptions


#: How one logical node type becomes exec nodes: ``check`` refuses what cannot run on
#: unbounded inputs (top-down, before anything is translated), ``translate`` builds.
@attrs.frozen
class Rule:
    check: Callable[[Any], None]
    translate: Callable[[Any, Translation], ExecNode]


#: Logical node type -> its rule (filled by :func:`exec_node` and :func:`translates`).
RULES: dict[type[PlanNode], Rule] = {}

_C = TypeVar("_C", bound="type[ExecNode]")


def exec_node(
    name: str, version: int = 1, implements: tuple[type[PlanNode], ...] = ()
) -> Callable[[_C], _C]:
    """Register an exec node class under ``name`` and ``version`` (Flink's
    ``@ExecNodeMetadata(name=..., version=...)``); ``implements``: the logical node types
    its ``check`` and ``translate`` class methods plan (a new operator's one registry line).

    Example::

        @exec_node("stream-exec-window-aggregate", 1, implements=(WindowAggregate,))
        @attrs.frozen(eq=False)
        class StreamExecWindowAggregate(ExecNode): ...
    """

    def register(cls: _C) -> _C:
        if name in EXEC_NODES:
            raise ValueError(f"exec node {name} is registered twice")
        cls.NAME, cls.VERSION = name, version
        EXEC_NODES[name] = cls
        for logical in implements:
            RULES[logical] = Rule(cls.check, cls.translate)
        return cls

    return register


def translates(
    logical: type[PlanNode], check: Callable[[Any], None] | None = None
) -> Callable[[Callable[[Any, Translation], ExecNode]], Callable[[Any, Translation], ExecNode]]:
    """Register a function that translates ``logical`` nodes (where one exec node class
    implements several logical ones in different ways, as a Calc does).

    Example::

        @translates(Filter)
        def _filter(node: Filter, t: Translation) -> StreamExecCalc: ...
    """

    def register(
        fn: Callable[[Any, Translation], ExecNode],
    ) -> Callable[[Any, Translation], ExecNode]:
        RULES[logical] = Rule(check or _no_check, fn)
        return fn

    return register


def _no_check(node: PlanNode) -> None:
    return None


@attrs.frozen(eq=False)
class ExecNode:
    """A physical operator: what it implements (``logical``), its inputs, and what it emits
    (``traits``; ``update_before``: do its consumers need its -U rows). Subclasses add the
    decisions their operator runs by, and :meth:`details` for explain."""

    NAME: ClassVar[str] = ""
    VERSION: ClassVar[int] = 1

    logical: PlanNode
    inputs: tuple[ExecNode, ...]
    traits: ChangelogTraits
    update_before: bool

    @classmethod
    def check(cls, node: PlanNode) -> None:
        """Refuse ``node`` where this operator cannot run it on unbounded inputs (called
        top-down over the plan before anything is translated)."""

    @classmethod
    def translate(cls, node: PlanNode, t: Translation) -> ExecNode:
        """The exec node (or nodes) for ``node``; ``t`` has its inputs' exec nodes, its
        traits and the options."""
        return cls(node, t.inputs, t.traits, t.update_before)

    @property
    def metadata(self) -> str:
        """``name_version``, as Flink's JSON plans name an exec node."""
        return f"{self.NAME}_{self.VERSION}"

    @property
    def row_type(self) -> RowType:
        return self.logical.row_type

    @property
    def changelog(self) -> bool:
        """Does the node emit updates (and so carry the row-kind column)?"""
        return self.traits.mode is ChangelogMode.ALL

    @property
    def emitted_mode(self) -> ChangelogMode:
        """The row kinds it emits to its consumers: no -U where none of them needs it."""
        if self.traits.mode is ChangelogMode.ALL and not self.update_before:
            return ChangelogMode.UPSERT
        return self.traits.mode

    @property
    def input(self) -> ExecNode:
        (only,) = self.inputs
        return only

    def walk(self) -> Iterator[ExecNode]:
        yield self
        for i in self.inputs:
            yield from i.walk()

    @property
    def stateful(self) -> bool:
        """Does the node run a stateful server_ext operator (the JVM plugin's)?"""
        return False

    def runs_operator(self) -> bool:
        """Does this node or one below it run a stateful server_ext operator?"""
        return any(n.stateful for n in self.walk())

    @property
    def waits_for_watermark(self) -> bool:
        """Does the node hold rows until event time passes them (timers: windows, outer
        interval joins, temporal joins)? Only then must the end of a bounded input move the
        watermark to +infinity (``compiler/end_of_input.py``); a query without such a node has
        its whole answer once its input is read."""
        return False

    def title(self) -> str:
        """The first part of the node's explain line: the optimized logical node's text."""
        from tableapi.plan.explain import optimized_text

        return optimized_text(self.logical)

    def details(self) -> list[str]:
        """What streaming adds to the node's explain line (its operator, state, TTL)."""
        return []

    def explain(self) -> str:
        """The node's explain text (Flink's ``changelogMode=[...]`` last)."""
        text = self.title()
        extra = [*self.details(), f"changelogMode=[{self.emitted_mode}]"]
        return text[:-1] + ", " + ", ".join(extra) + ")" if text.endswith(")") else text


@attrs.frozen
class OperatorInput:
    """One input of a server_ext operator as the compiler tags it into the operator's union:
    its exec node, the columns of its row that group it (``__k0..``; none: one constant
    group), the rowtime column the operator reads as epoch millis (``__t``), and the row it
    carries: ``None`` for the node's own row, else computed columns (name, expression over
    the node's row, type; a ``None`` expression is a NULL of that type). ``upserts``: drop
    the input's -U rows (a versioned table read as an upsert stream)."""

    node: ExecNode
    keys: tuple[str, ...]
    time: str | None = None
    row: tuple[tuple[str, Expression | None, DataType], ...] | None = None
    upserts: bool = False

    @property
    def row_type(self) -> RowType:
        """The row this input carries in its struct column."""
        if self.row is None:
            return self.node.row_type
        return RowType(tuple(Field(n, t) for n, _, t in self.row))


@attrs.frozen(eq=False)
class StreamExecOperator(ExecNode):
    """An exec node that runs a server_ext operator (the JVM plugin's): it gives the
    operator's spec (its decisions, as the wire carries them) and its inputs
    (:class:`OperatorInput`), and the streaming compiler's one ``visit_StreamExecOperator``
    builds the union, runs the operator and reads its output as this node's rows. A new
    stateful operator is a subclass of this, its spec (``server_ext``) and its Java class.

    Example::

        @exec_node("stream-exec-deduplicate", 1, implements=(Deduplicate,))
        @attrs.frozen(eq=False)
        class StreamExecDeduplicate(StreamExecOperator):
            def operator_spec(self) -> DeduplicateSpec: ...
            def operator_inputs(self) -> tuple[OperatorInput, ...]:
                return (OperatorInput(self.input, self.dedup.keys, self.dedup.time),)
    """

    @property
    def stateful(self) -> bool:
        return True

    @property
    def waits_for_watermark(self) -> bool:
        # An operator may fire timers at the watermark unless its node says it does not.
        return True

    def operator_spec(self) -> Any:
        """The operator's spec (a class of ``server_ext.operators.SPECS``)."""
        raise NotImplementedError(f"{type(self).__name__} gives no operator spec")

    def operator_inputs(self) -> tuple[OperatorInput, ...]:
        """The operator's inputs, in the order of their ``__side`` tags."""
        return tuple(OperatorInput(i, ()) for i in self.inputs)

    @property
    def timed(self) -> bool:
        """Does the union carry ``__t`` (an input's time, epoch millis; NULL without one)?"""
        return any(i.time is not None for i in self.operator_inputs())
