"""Stateless exec nodes: scans, calcs, exchanges, unions and lookup joins (streaming).

Example::

    >>> from tableapi.plan import FileSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> from tableapi.physical import StreamingOptions, plan_stream
    >>> row = RowType.of(("id", BIGINT))
    >>> scan = Scan("T", FileSource("/t", "json", op_column="op"), row)
    >>> node = plan_stream(scan, StreamingOptions()).root
    >>> type(node).__name__, node.changelog, node.bounded
    ('StreamExecTableSourceScan', True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import attrs

from tableapi.errors import ValidationError
from tableapi.expressions import Expression
from tableapi.physical.base import ExecNode, Translation, exec_node, translates
from tableapi.plan import (
    ElementsSource,
    Exchange,
    FileSource,
    Filter,
    JdbcSource,
    LookupJoin,
    NexmarkSource,
    Project,
    QueryHints,
    Scan,
    SparkSource,
    Union,
)
from tableapi.plan.changelog import is_bounded, is_changelog
from tableapi.plan.lookup import lookup_table_misuse


def _refuse_jdbc(scan: Scan) -> None:
    raise ValidationError(lookup_table_misuse(scan.table_name))


def _refuse_elements(scan: Scan) -> None:
    raise ValidationError(
        f"Table {scan.table_name} comes from from_elements(), a bounded input: in "
        "streaming mode read a filesystem table (create_temporary_table) instead."
    )


def _check_dataframe(scan: Scan) -> None:
    source = scan.source
    assert isinstance(source, SparkSource)
    if not source.dataframe.isStreaming:
        raise ValidationError(
            f"Table {scan.table_name} wraps a batch Spark DataFrame; in streaming mode "
            "pass a streaming one (spark.readStream...)."
        )


def _check_file(scan: Scan) -> None:
    source = scan.source
    assert isinstance(source, FileSource)
    op = source.op_column
    if op and op in scan.row_type:
        raise ValidationError(
            f"changelog.op-column {op!r} of table {scan.table_name} is also a column of its "
            "schema; the op column is not part of the table: remove it from the schema."
        )


#: Source type -> what refuses a scan of it in streaming mode.
_SCAN_CHECKS: dict[type, Callable[[Scan], None]] = {
    JdbcSource: _refuse_jdbc,
    ElementsSource: _refuse_elements,
    SparkSource: _check_dataframe,
    FileSource: _check_file,
    NexmarkSource: lambda scan: None,  # its options and columns were checked at creation
}


def _unreadable(scan: Scan) -> None:
    raise ValidationError(f"Table {scan.table_name} cannot be read as a stream.")


def _check_scan(scan: Scan) -> None:
    _SCAN_CHECKS.get(type(scan.source), _unreadable)(scan)


def _translate_scan(scan: Scan, t: Translation) -> ExecNode:
    return _SCANS[type(scan.source)](scan, t)


@exec_node("stream-exec-table-source-scan", 1)
@attrs.frozen(eq=False)
class StreamExecTableSourceScan(ExecNode):
    """A filesystem or nexmark table read as a stream. ``bounded``: it ends (no monitor
    interval, ``events.num`` > 0);
    ``plugin_positions``: its changelog rows are numbered by the JVM plugin (else by the
    pandas UDF twins, on a server without it)."""

    bounded: bool = False
    plugin_positions: bool = True

    @property
    def scan(self) -> Scan:
        return cast(Scan, self.logical)

    @property
    def source(self) -> FileSource | NexmarkSource:
        return cast(FileSource | NexmarkSource, self.scan.source)

    @property
    def files(self) -> FileSource:
        """The source of a filesystem table."""
        source = self.scan.source
        assert isinstance(source, FileSource)
        return source

    @classmethod
    def translate(cls, node: Any, t: Translation) -> ExecNode:
        plugin = t.options.jvm_plugin is not False
        return cls(node, t.inputs, t.traits, t.update_before, is_bounded(node), plugin)


@exec_node("stream-exec-data-stream-scan", 1)
@attrs.frozen(eq=False)
class StreamExecDataStreamScan(ExecNode):
    """A streaming Spark DataFrame as a table (Flink's DataStream scan)."""

    @property
    def dataframe(self) -> Any:
        return cast(SparkSource, cast(Scan, self.logical).source).dataframe


#: Source type -> its scan's exec node.
_SCANS: dict[type, Callable[[Scan, Translation], ExecNode]] = {
    FileSource: StreamExecTableSourceScan.translate,
    NexmarkSource: StreamExecTableSourceScan.translate,
    SparkSource: StreamExecDataStreamScan.translate,
}
translates(Scan, _check_scan)(_translate_scan)


@exec_node("stream-exec-calc", 1)
@attrs.frozen(eq=False)
class StreamExecCalc(ExecNode):
    """A projection (``projection``: expression and name per column) or a filter
    (``condition``) over one input, row kind and order carried through."""

    projection: tuple[tuple[Expression, str], ...] | None = None
    condition: Expression | None = None


@translates(Project)
def _project(node: Project, t: Translation) -> ExecNode:
    columns = tuple(zip(node.exprs, node.names, strict=True))
    return StreamExecCalc(node, t.inputs, t.traits, t.update_before, projection=columns)


@translates(Filter)
def _filter(node: Filter, t: Translation) -> ExecNode:
    return StreamExecCalc(node, t.inputs, t.traits, t.update_before, condition=node.condition)


@translates(QueryHints)
def _hints(node: QueryHints, t: Translation) -> ExecNode:
    return t.inputs[0]  # the hint rule has moved the hints onto the joins: nothing runs


@exec_node("stream-exec-exchange", 1, implements=(Exchange,))
@attrs.frozen(eq=False)
class StreamExecExchange(ExecNode):
    """A hash distribution of the rows by ``keys`` (Flink's Exchange)."""

    @property
    def keys(self) -> tuple[Expression, ...]:
        return cast(Exchange, self.logical).keys


@exec_node("stream-exec-union", 1, implements=(Union,))
@attrs.frozen(eq=False)
class StreamExecUnion(ExecNode):
    """UNION ALL of two streams; an insert-only side of a changelog union gets ``+I``
    kinds (``insert_only_inputs``: which sides)."""

    insert_only_inputs: tuple[bool, ...] = ()

    @classmethod
    def check(cls, node: Any) -> None:
        if node.distinct:
            raise ValidationError(
                "union (distinct) is not supported in streaming mode; use union_all."
            )

    @classmethod
    def translate(cls, node: Any, t: Translation) -> ExecNode:
        plain = tuple(not i.changelog for i in t.inputs)
        return cls(node, t.inputs, t.traits, t.update_before, plain)


@exec_node("stream-exec-lookup-join", 1, implements=(LookupJoin,))
@attrs.frozen(eq=False)
class StreamExecLookupJoin(ExecNode):
    """server_ext's lookup operator over the probe input, per Arrow batch."""

    @classmethod
    def check(cls, node: Any) -> None:
        if node.shuffle:
            check_hash_lookup(node)

    def details(self) -> list[str]:
        return ["operator=[server_ext lookup join, per Arrow batch]"]


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
