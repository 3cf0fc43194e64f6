"""Optimized plan -> streaming Spark Connect DataFrame (streaming mode).

A node whose changelog mode is not insert-only carries two extra columns: ``__kind``, the
row kind (Flink's RowKind byte, see ``server_ext.joins.spec``), and ``__seq``, the order of
the change (the modification time and name of the file it came from, the start of the file
split and the row's position in reading order, as sortable text: see ``_in_file_order``). Operators
process the changes of one key in that order; the result reads its changes back by it. The
compiler visits the physical plan's exec nodes (``tableapi.physical``), which hold every
decision: a join compiles to Spark's native stream-stream join where its exec node says so,
else to a server_ext operator (``operators.py``): the inputs tagged, unioned, grouped by the
join key and handed to the server's JVM plugin.

Example::

    physical = plan_stream(table.optimized().plan, options)  # tableapi.physical
    compiled = compile_stream(physical, spark)
    compiled.dataframe.writeStream.format("memory").queryName("q").start()
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, cast

import attrs
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.session import SparkSession
from pyspark.sql.connect.udf import UserDefinedFunction
from pyspark.sql.types import LongType
from pyspark.util import PythonEvalType

from server_ext.file_times import file_times
from server_ext.joins import spec as wire
from server_ext.joins import temporal_spec as tw
from server_ext.operators import OperatorSpec
from server_ext.positions import next_positions
from tableapi.compiler.base import Compiler
from tableapi.compiler.batch import BatchCompiler
from tableapi.compiler.end_of_input import EndOfInput
from tableapi.compiler.expressions import ref, to_spark
from tableapi.compiler.jvm_operators import NO_PLUGIN, jvm_file_time, jvm_position
from tableapi.compiler.nexmark import read_nexmark
from tableapi.compiler.operators import (
    TaggedUnion,
    key_columns,
    key_types,
    local_aggregate,
    local_window_aggregate,
    operator_time_mode,
    output_schema,
    partials_union,
    run_operator,
    tag_columns,
    tagged_union,
)
from tableapi.errors import ValidationError
from tableapi.expressions import Call, Column, Expression, Literal
from tableapi.physical import (
    ExecNode,
    JoinStrategy,
    StreamExecCalc,
    StreamExecDataStreamScan,
    StreamExecExchange,
    StreamExecGlobalGroupAggregate,
    StreamExecJoin,
    StreamExecLocalGroupAggregate,
    StreamExecLookupJoin,
    StreamExecOperator,
    StreamExecTableSourceScan,
    StreamExecTemporalJoin,
    StreamExecUnion,
    StreamPhysicalPlan,
)
from tableapi.physical.options import StateBackend
from tableapi.physical.window_join import StreamExecWindowTableFunction
from tableapi.physical.windows import (
    StreamExecGlobalWindowAggregate,
    StreamExecLocalWindowAggregate,
)
from tableapi.plan import FileSource, LookupJoin, NexmarkSource, Scan
from tableapi.plan.changelog import ChangelogMode
from tableapi.plan.sources import FILE_ORDERS
from tableapi.types import to_spark as spark_type

KIND = wire.KIND
SEQ = wire.SEQ
# changelog.op-column values -> RowKind byte (Flink's short strings and its long names).
OP_VALUES = {"+I": 0, "I": 0, "-U": 1, "UB": 1, "+U": 2, "UA": 2, "-D": 3, "D": 3}
# What a changelog scan takes of Spark's file metadata for ``__seq``, and its position column.
_FILE_FIELDS = ("file_path", "file_modification_time", "file_block_start")
_POSITION = "__position"
_FILE_TIME = "__file_time"
_OPERATOR_POSITION = "__operator_position"  # an operator's output rows, numbered


@attrs.frozen(eq=False)
class CompiledStream:
    """A streaming DataFrame and what running it needs."""

    dataframe: DataFrame
    mode: ChangelogMode
    state_backend: StateBackend  # the query's (state.backend.type)
    processing_time: bool  # some operator needs timeMode ProcessingTime (state TTL)
    bounded: bool = False  # every input ends: the query runs to the end and stops
    trigger_ms: int | None = None  # the micro-batch interval (source.monitor-interval)
    end_of_input: EndOfInput | None = None  # read by bounded tables with watermarks
    lookups: tuple[tuple[str, str], ...] = ()  # (lookup table, its observation's name)
    # The changelog with its order (mode ALL): ``dataframe`` + ``__seq``. Within a micro-batch
    # Spark emits partition after partition (files largest first), so a sink sees the changes
    # of a stateless pipeline out of order; the result reads them back sorted by ``__seq``
    # (operators emit ``''``: their rows keep the sink's order).
    changelog: DataFrame | None = None
    # Some operator holds rows until event time passes them (ExecNode.waits_for_watermark).
    waits: bool = True


def compile_stream(
    physical: StreamPhysicalPlan,
    spark: SparkSession,
    end_of_input: EndOfInput | None = None,
    local_files: bool = False,
) -> CompiledStream:
    """Compile a streaming query's exec nodes (``tableapi.physical.plan_stream``). With
    ``end_of_input`` the bounded tables' watermarks move to +infinity when it is signalled
    (see ``end_of_input.py``); without it they stay where their data leaves them.
    ``local_files``: the server reads this machine's files, so a missing path is refused
    before anything runs."""
    check_plugin(physical)
    compiler = StreamingCompiler(spark, end_of_input, local_files)
    root = physical.root
    df = compiler.compile(root)
    changelog = None
    if root.changelog:  # the result keeps the row kind; __seq orders its changes
        columns = [*(ref(n) for n in root.row_type.names), ref(KIND)]
        df, changelog = df.select(*columns), df.select(*columns, ref(SEQ))
    return CompiledStream(
        df,
        root.traits.mode,
        physical.options.state_backend,
        compiler.processing_time,
        physical.bounded,
        physical.trigger_ms,
        end_of_input,
        tuple(compiler.lookups),
        changelog,
        physical.waits_for_watermark,
    )


def check_plugin(physical: StreamPhysicalPlan) -> None:
    """Refuse a plan with stateful operators for a server without the JVM plugin (their only
    runtime), saying how to get it.

    >>> from tableapi.plan import Distinct, FileSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> from tableapi.physical import StreamingOptions, plan_stream
    >>> scan = Scan("A", FileSource("/a", "json"), RowType.of(("a", BIGINT)))
    >>> no_plugin = StreamingOptions(jvm_plugin=False)
    >>> check_plugin(plan_stream(Distinct(scan), no_plugin))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: This query's Distinct cannot run: Stateful streaming ...
    >>> check_plugin(plan_stream(scan, no_plugin))  # stateless: no plugin needed
    """
    if physical.options.jvm_plugin is not False:
        return
    operators = sorted({type(n.logical).__name__ for n in physical.stateful_nodes()})
    if operators:
        raise ValidationError(f"This query's {', '.join(operators)} cannot run: {NO_PLUGIN}")


class StreamingCompiler(Compiler):
    """Streaming mode: visits the physical plan's exec nodes; every node's DataFrame has the
    node's columns, plus ``__kind`` and ``__seq`` when the node emits a changelog."""

    mode = "streaming"

    def __init__(
        self,
        spark: SparkSession,
        end_of_input: EndOfInput | None = None,
        local_files: bool = False,
    ) -> None:
        super().__init__(spark, local_files)
        self.end_of_input = end_of_input
        self.processing_time = False  # what running the query needs, found while compiling

    def carried_fields(self, node: ExecNode) -> list[tuple[str, str]]:
        return [(KIND, "TINYINT"), (SEQ, "STRING")] if node.changelog else []

    def observation(self, name: str) -> Any:
        return name

    # -- scans --------------------------------------------------------------------------------
    def visit_StreamExecDataStreamScan(self, node: StreamExecDataStreamScan) -> DataFrame:
        df: DataFrame = node.dataframe
        return df

    def visit_StreamExecTableSourceScan(self, node: StreamExecTableSourceScan) -> DataFrame:
        df = _STREAM_READERS[type(node.scan.source)](self, node)
        return self._with_watermark(df, node.scan, node.bounded)

    def _read_nexmark(self, node: StreamExecTableSourceScan) -> DataFrame:
        return read_nexmark(self.spark, node.scan, streaming=True)

    def _read_files(self, node: StreamExecTableSourceScan) -> DataFrame:
        scan, source = node.scan, node.files
        self.check_path(scan.table_name, source)
        ddl = scan.row_type.spark_ddl
        op = source.op_column
        if op:
            # CSV is positional: the op column comes first (Flink's changelog-csv); JSON and
            # Parquet read it by name.
            ddl = f"`{op}` STRING, {ddl}" if source.format == "csv" else f"{ddl}, `{op}` STRING"
        reader = self.spark.readStream.format(source.format).schema(ddl)
        for k, v in source.options:
            reader = reader.option(k, v)
        df: DataFrame = reader.load(source.path)
        return self._in_file_order(df, node, op) if op else df

    def _in_file_order(self, df: DataFrame, node: StreamExecTableSourceScan, op: str) -> DataFrame:
        """A changelog scan's columns, ``__kind`` and ``__seq``: the change's place in its
        table, as sortable text: its file's modification time in nanoseconds (Spark's own
        has milliseconds, which files written back to back share: ``file_time``, which fails
        the query on a tie within a directory), or zeros with ``changelog.file-order`` =
        ``name``; its path (the path, not the name, so that files of two tables that tie are
        taken in the same order in every run, as a replay after a crash must); the start of
        the file split; and the row's position in its task's reading order (a task reads a
        split from start to end; nothing else in Spark keeps that order: a sort that spills
        merges equal keys in any order)."""
        names = node.row_type.names
        plugin = node.plugin_positions
        files = {f: F.col(f"_metadata.{f}").alias(f"__{f}") for f in _FILE_FIELDS}
        df = df.select(*(ref(n) for n in names), ref(op), *files.values())
        df = with_positions(df, _POSITION, ref("__file_block_start"), plugin)
        if node.files.file_order == FILE_ORDERS[0]:
            df = _file_times(df, node.scan.table_name, plugin)
            time = ref(_FILE_TIME).cast("string")
        else:  # "name": the path alone orders the files
            time = F.lit("0")
        seq = F.concat_ws(
            "/",
            F.lpad(time, 20, "0"),
            ref("__file_path"),
            F.lpad(ref("__file_block_start").cast("string"), 20, "0"),
            F.lpad(ref(_POSITION).cast("string"), 20, "0"),
        )
        kind = _kind_of(ref(op), op, ref("__file_path"))
        return df.select(*(ref(n) for n in names), kind, seq.alias(SEQ))

    def _with_watermark(self, df: DataFrame, node: Scan, bounded: bool) -> DataFrame:
        """The schema's ``WATERMARK FOR t AS t - INTERVAL ...`` as Spark's ``withWatermark``;
        on a bounded table the end of the input moves it to +infinity."""
        spec = node.schema.watermark if node.schema else None
        if spec is None:
            return df

        def is_rowtime(e: Expression) -> bool:  # (Expression's == builds an expression)
            return isinstance(e, Column) and e.name == spec.column

        expr = spec.expr
        delay_ms = 0
        if isinstance(expr, Call) and expr.name == "minus" and isinstance(expr.args[1], Literal):
            value = expr.args[1].value
            if isinstance(value, dt.timedelta) and is_rowtime(expr.args[0]):
                delay_ms = int(value.total_seconds() * 1000)
                expr = expr.args[0]
        if not is_rowtime(expr):
            raise ValidationError(
                f"Table {node.table_name}: streaming mode supports watermarks of the form "
                f"'{spec.column} - INTERVAL ...' (a bounded delay); got {spec.expr}."
            )
        delay = f"{delay_ms} milliseconds"
        end = self.end_of_input if bounded else None
        if end is None:
            watermarked = df.withWatermark(spec.column, delay)
        else:
            rowtime_type = spark_type(node.row_type.field(spec.column).type)
            watermarked = end.with_watermark(df, self.spark, spec.column, rowtime_type, delay)
        # Flink's watermark sees every row of its source. Spark pushes a filter that does not
        # name the rowtime below the watermark (the query's own, or an isnotnull() it infers
        # for a join key): that would change the watermark, and drop the end-of-input row.
        # Spark pushes no filter past a nondeterministic one: this always-true one keeps them
        # above (a rand() comparison would not do: Spark folds rand() >= 0 to true).
        return watermarked.filter(F.spark_partition_id() >= F.lit(0))

    # -- stateless ----------------------------------------------------------------------------
    def visit_StreamExecCalc(self, node: StreamExecCalc) -> DataFrame:
        df = self.compile(node.input)
        row = node.input.row_type
        if node.condition is not None:
            df = self.filter(node.condition, row, df)
        if node.projection is not None:
            df = self.project(node.projection, row, df, self.carried_columns(node.input))
        return df

    def visit_StreamExecWindowTableFunction(self, node: StreamExecWindowTableFunction) -> DataFrame:
        """A window join's TVF: its rows as batch mode assigns them windows (stateless)."""
        return BatchCompiler.visit_WindowTableFunction(self, node)  # type: ignore[arg-type]

    def visit_StreamExecExchange(self, node: StreamExecExchange) -> DataFrame:
        return self.exchange(node.keys, node.input.row_type, self.compile(node.input))

    def visit_StreamExecLookupJoin(self, node: StreamExecLookupJoin) -> DataFrame:
        """server_ext's lookup operator over the probe input (see ``lookup.py``)."""
        lookup = cast(LookupJoin, node.logical)
        return self.lookup(lookup, self.compile(node.input), self.carried_fields(node.input))

    def visit_StreamExecUnion(self, node: StreamExecUnion) -> DataFrame:
        sides = []
        for side, insert_only in zip(node.inputs, node.insert_only_inputs, strict=True):
            df = self.compile(side)
            if node.changelog and insert_only:
                # An insert-only stream as a changelog: every row +I, in no particular order.
                kind = F.lit(wire.INSERT).cast("tinyint").alias(KIND)
                df = df.select("*", kind, F.lit("").alias(SEQ))
            sides.append(df)
        return sides[0].unionAll(sides[1])

    def operator_input(self, child: ExecNode) -> DataFrame:
        """``child`` compiled as an operator's input. An operator's output changes carry an
        empty ``__seq``: where they reach another operator through narrow steps only, each
        gets its place in its task's output order instead (the key's changes stay in order
        through the shuffle and the sort, which keeps equal keys in order only while it does
        not spill); a scan's ``__seq`` stays."""
        df = self.compile(child)
        if not child.changelog or not child.runs_operator():
            return df
        df = with_positions(df, _OPERATOR_POSITION, ref(KIND), plugin=True)  # operators: JVM
        place = F.lpad(ref(_OPERATOR_POSITION).cast("string"), 20, "0")
        seq = F.when(ref(SEQ) == F.lit(""), place).otherwise(ref(SEQ)).alias(SEQ)
        names = [*child.row_type.names, KIND]
        return df.select(*(ref(n) for n in names), seq)

    # -- server_ext operators ----------------------------------------------------------------
    def visit_StreamExecOperator(self, node: StreamExecOperator) -> DataFrame:
        """Every exec node that runs a server_ext operator (a subclass of
        ``StreamExecOperator`` without a visit of its own): its inputs tagged into one
        union, grouped by their keys, and its spec's operator run over it."""
        return self._operator(node, self.operator_union(node), node.operator_spec())

    def operator_union(self, node: StreamExecOperator, ordered: bool = True) -> TaggedUnion:
        """The node's operator inputs (``operator_inputs()``) tagged into one union: each
        input's keys (in ``__k0..``, cast to the type every input's widens to), its tags and
        its row (or its computed columns) in its own struct column, and with ``node.timed``
        its time as epoch millis in ``__t``. ``ordered``: each input read as an operator's
        input (``operator_input``: changes of a key keep their order); the local phase of an
        aggregation needs no order."""
        inputs = node.operator_inputs()
        positions = {len(i.keys) for i in inputs}
        if len(positions) != 1:
            raise ValidationError(f"internal: {node.NAME}'s inputs group by different key counts")
        types = key_types(
            [[i.node.row_type.field(i.keys[p]).type for i in inputs] for p in range(*positions)]
        )
        rows = [i.row_type for i in inputs]
        tagged = []
        for side, i in enumerate(inputs):
            df = self.operator_input(i.node) if ordered else self.compile(i.node)
            if i.upserts and i.node.changelog:
                df = df.filter(ref(KIND) != F.lit(wire.UPDATE_BEFORE))
            own = None
            if i.row is not None:
                row = i.node.row_type
                own = F.struct(
                    *(
                        (F.lit(None) if e is None else to_spark(e, row)).cast(t.spark_ddl).alias(n)
                        for n, e, t in i.row
                    )
                )
            # The time as epoch millis only: a timestamp copy of a rowtime would carry its
            # watermark marker, and Spark would drop rows behind the watermark before the
            # operator (which decides itself what is late: the temporal join counts them).
            stamp = ref(i.time) if i.time else F.lit(None).cast("timestamp")
            time = [F.unix_millis(stamp).alias(tw.TIME)] if node.timed else []
            tags = tag_columns(side, i.node.logical, rows, own)
            tagged.append(df.select(*key_columns(list(i.keys), types), *tags, *time))
        children = [i.node.logical for i in inputs]
        return tagged_union(tagged, types, children, time=node.timed, rows=rows)

    def visit_StreamExecJoin(self, node: StreamExecJoin) -> DataFrame:
        if node.strategy is JoinStrategy.NATIVE:  # Spark's own join gives Flink's answer
            return self._spark_join(node)
        return self.visit_StreamExecOperator(node)

    def _spark_join(self, node: StreamExecJoin) -> DataFrame:
        left, right = node.inputs
        return self.spark_join(node.join, self.compile(left), self.compile(right))

    def visit_StreamExecLocalGroupAggregate(self, node: StreamExecLocalGroupAggregate) -> DataFrame:
        """The local phase: partial accumulators per group key and task (partials merge in
        any order, so the input needs no order of its own)."""
        union = self.operator_union(node, ordered=False)
        return local_aggregate(union, node.operator_spec(), output_schema(node.row_type))

    def visit_StreamExecGlobalGroupAggregate(
        self, node: StreamExecGlobalGroupAggregate
    ) -> DataFrame:
        """The global phase: the group aggregate operator merging the local partials."""
        union = partials_union(self.compile(node.input), max(len(node.group_keys), 1))
        return self._operator(node, union, node.operator_spec())

    def visit_StreamExecLocalWindowAggregate(
        self, node: StreamExecLocalWindowAggregate
    ) -> DataFrame:
        """A window aggregation's local phase: partial accumulators per key, slice and task."""
        union = self.operator_union(node, ordered=False)
        spec = node.operator_spec()
        return local_window_aggregate(union, spec, output_schema(node.row_type))

    def visit_StreamExecGlobalWindowAggregate(
        self, node: StreamExecGlobalWindowAggregate
    ) -> DataFrame:
        """A window aggregation's global phase: the window aggregate operator merging the
        local partials into its slices."""
        union = partials_union(self.compile(node.input), max(len(node.aggregate.keys), 1))
        return self._operator(node, union, node.operator_spec())

    def visit_StreamExecTemporalJoin(self, node: StreamExecTemporalJoin) -> DataFrame:
        """The temporal join operator over both inputs tagged by side; probe rows that arrive
        behind the watermark are counted (observed metric ``late_rows``) and dropped."""
        union = self.operator_union(node)
        out = self._operator(node, union, node.operator_spec(), keep_late=True)
        late = F.col(KIND) == F.lit(tw.LATE)
        out = out.observe(
            tw.LATE_ROWS_METRIC, F.sum(F.when(late, 1).otherwise(0)).alias("late_rows")
        )
        return out.filter(~late).select(
            *(ref(n) for n in node.row_type.names), *self.carried_columns(node)
        )

    def _operator(
        self, node: ExecNode, union: TaggedUnion, spec: OperatorSpec, keep_late: bool = False
    ) -> DataFrame:
        """Run ``spec``'s server_ext operator over ``union``; the rows come out with the
        node's columns and, for a changelog, its row kind (changes of one output row come
        from one key, in order: across keys the order is free, so ``__seq`` is empty)."""
        self.processing_time |= operator_time_mode(spec) == "ProcessingTime"
        out = run_operator(union, spec, output_schema(node.row_type))
        if keep_late:  # the temporal join counts and drops its late rows itself
            return out
        names = [ref(n) for n in node.row_type.names]
        if not node.changelog:
            return out.select(*names)
        return out.select(*names, ref(KIND), F.lit("").alias(SEQ))


#: Source type -> how a streaming query reads its table.
_STREAM_READERS: dict[type, Callable[[StreamingCompiler, StreamExecTableSourceScan], DataFrame]] = {
    FileSource: StreamingCompiler._read_files,
    NexmarkSource: StreamingCompiler._read_nexmark,
}


def _file_times(df: DataFrame, table: str, plugin: bool) -> DataFrame:
    """``df`` plus ``__file_time``: its rows' files' modification times in nanoseconds (the
    plugin's ``file_time`` relation; without the plugin its pandas UDF twin)."""
    if plugin:
        return jvm_file_time(df, "__file_path", _FILE_TIME, table)
    times = UserDefinedFunction(
        file_times, LongType(), evalType=PythonEvalType.SQL_SCALAR_PANDAS_UDF
    )
    micros = F.unix_micros(ref("__file_modification_time"))
    return df.select("*", times(ref("__file_path"), micros, F.lit(table)).alias(_FILE_TIME))


def _kind_of(op: SparkColumn, name: str, file_path: SparkColumn) -> SparkColumn:
    """The RowKind byte of an op-column value; an unknown value fails the query (no row is
    silently dropped)."""
    kind = None
    for value, byte in OP_VALUES.items():
        kind = (F if kind is None else kind).when(op == value, F.lit(byte))
    assert kind is not None
    error = F.raise_error(
        F.concat(
            F.lit(f"changelog.op-column {name!r} holds the unknown value '"),
            F.coalesce(op, F.lit("NULL")),
            F.lit("'; use +I, -U, +U, -D (or I, UB, UA, D). File: "),
            file_path,
        )
    )
    return kind.otherwise(error).cast("tinyint").alias(KIND)


def with_positions(df: DataFrame, name: str, any_column: SparkColumn, plugin: bool) -> DataFrame:
    """``df`` plus ``name``: each task numbers its rows from 0 in the order it reads or makes
    them, the same way every time it runs (the plugin's ``position`` relation, else its
    pandas UDF twin, counting rows by ``any_column``).

    Example::

        numbered = with_positions(scan, "__position", scan["__kind"], plugin=True)
    """
    if not plugin:
        # Connect's own UDF class: pandas_udf() would look for a classic SparkContext.
        position = UserDefinedFunction(
            next_positions, LongType(), evalType=PythonEvalType.SQL_SCALAR_PANDAS_UDF
        ).asNondeterministic()
        return df.select("*", position(any_column).alias(name))
    return jvm_position(df, name)
