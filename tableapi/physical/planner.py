"""The streaming physical planner: an optimized logical plan -> exec nodes, made once (after
the logical rules) with every physical decision in its node; the compiler and explain read
them, neither decides again.

Example::

    >>> from tableapi.plan import FileSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> scan = Scan("T", FileSource("/t", "json"), RowType.of(("a", BIGINT)))
    >>> print(plan_stream(scan, StreamingOptions()).explain())
    TableSourceScan(table=[[default_catalog, default_database, T]], fields=[a], \
changelogMode=[I])
"""

from __future__ import annotations

import attrs

from tableapi.errors import ValidationError
from tableapi.physical.base import RULES, ExecNode, Rule, Translation
from tableapi.physical.options import StreamingOptions
from tableapi.plan.base import PlanNode
from tableapi.plan.changelog import (
    all_bounded,
    changelog_traits,
    monitor_interval_ms,
    update_before_needed,
)
from tableapi.plan.explain import render_tree


@attrs.frozen(eq=False)
class StreamPhysicalPlan:
    """A streaming query's exec nodes (``root``), and what running it needs: whether every
    input ends (``bounded``: it runs to the end and stops) and its micro-batch interval."""

    root: ExecNode
    options: StreamingOptions
    bounded: bool
    trigger_ms: int | None

    def explain(self) -> str:
        """The exec nodes as Flink's optimized plan text (``:-`` / ``+-`` tree)."""
        return render_tree(self.root, ExecNode.explain, lambda n: n.inputs)

    @property
    def waits_for_watermark(self) -> bool:
        """Does some node hold rows until event time passes them (ExecNode's property)?"""
        return any(n.waits_for_watermark for n in self.root.walk())

    def stateful_nodes(self) -> list[ExecNode]:
        """The nodes that run a stateful server_ext operator (the JVM plugin's)."""
        return [n for n in self.root.walk() if n.stateful]


def _rule(node: PlanNode) -> Rule:
    rule = RULES.get(type(node))
    if rule is None:
        raise ValidationError(
            f"{type(node).__name__} is not supported in streaming mode yet; run this "
            "query with TableEnvironment.create(mode='batch')."
        )
    return rule


def check_streaming(plan: PlanNode) -> None:
    """Errors for plans that cannot run on unbounded inputs, raised at plan time, top-down
    (each node's rule checks it).

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> check_streaming(Scan("T", ElementsSource(()), RowType.of(("a", BIGINT))))
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Table T comes from from_elements(), a bounded input: in \
streaming mode read a filesystem table (create_temporary_table) instead.
    """
    for node in plan.walk():
        _rule(node).check(node)


def trigger_ms(plan: PlanNode, options: StreamingOptions) -> int | None:
    """The micro-batch interval: the shortest ``source.monitor-interval`` of the watched
    tables, at least the mini-batch allow-latency (a micro-batch is a mini-batch bundle);
    None when every table is bounded (the query runs to its end).

    >>> from tableapi.plan import FileSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> watched = FileSource("/t", "json", monitor_interval_ms=1000)
    >>> scan = Scan("T", watched, RowType.of(("k", BIGINT)))
    >>> trigger_ms(scan, StreamingOptions()), trigger_ms(scan, StreamingOptions(mini_batch_ms=5000))
    (1000, 5000)
    """
    interval = monitor_interval_ms(plan)
    if interval is None or options.mini_batch_ms is None:
        return interval
    return max(interval, options.mini_batch_ms)


def plan_stream(
    plan: PlanNode, options: StreamingOptions, sink_keys: tuple[str, ...] | None = None
) -> StreamPhysicalPlan:
    """The exec nodes of an optimized plan, checked for unbounded inputs first. ``sink_keys``:
    the plan's rows go into a sink keyed by these columns (an upsert sink), which needs no
    -U rows where the plan's upsert key is within them; None: the consumer needs them.

    >>> from tableapi.plan import FileSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> scan = Scan("T", FileSource("/t", "json"), RowType.of(("a", BIGINT)))
    >>> physical = plan_stream(scan, StreamingOptions())
    >>> type(physical.root).__name__, physical.bounded, physical.stateful_nodes()
    ('StreamExecTableSourceScan', True, [])
    """
    check_streaming(plan)
    needed = update_before_needed(plan, sink_keys)
    built: dict[int, ExecNode] = {}  # a shared input is one exec node

    def translate(node: PlanNode) -> ExecNode:
        known = built.get(id(node))
        if known is None:
            inputs = tuple(translate(i) for i in node.inputs)
            step = Translation(inputs, changelog_traits(node), needed.get(id(node), True), options)
            known = built[id(node)] = _rule(node).translate(node, step)
        return known

    return StreamPhysicalPlan(
        translate(plan), options, all_bounded(plan), trigger_ms(plan, options)
    )
