"""Optimized plan -> streaming Spark Connect DataFrame (streaming mode).

A node whose changelog mode is not insert-only carries two extra columns: ``__kind``, the
row kind (Flink's RowKind byte, see ``server_ext.joins.spec``), and ``__seq``, the order of
the change (the modification time and name of the file it came from, the start of the file
split and the row's position in reading order, as sortable text: see ``_in_file_order``). Operators
process the changes of one key in that order; the result reads its changes back by it. Joins
compile either to Spark's native stream-stream join (where its semantics are Flink's) or to
a server_ext operator (``operators.py``): the inputs tagged, unioned, grouped by the join
key and handed to the server's JVM plugin.

Example::

    compiled = compile_stream(table.optimized().plan, spark, options)
    compiled.dataframe.writeStream.format("memory").queryName("q").start()
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import attrs
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.session import SparkSession
from pyspark.sql.connect.udf import UserDefinedFunction
from pyspark.sql.types import LongType
from pyspark.util import PythonEvalType

from server_ext.file_times import file_times
from server_ext.joins import multi_spec as mw
from server_ext.joins import spec as wire
from server_ext.joins import temporal_spec as tw
from server_ext.operators import OperatorSpec
from server_ext.positions import next_positions
from tableapi.compiler.base import Compiler
from tableapi.compiler.end_of_input import EndOfInput
from tableapi.compiler.expressions import ref, to_spark
from tableapi.compiler.jvm_operators import NO_PLUGIN, jvm_file_time, jvm_position
from tableapi.compiler.operators import (
    WIRE_KINDS,
    TaggedUnion,
    aggregate_spec,
    condition_tree,
    fields_of,
    interval_join_spec,
    join_spec,
    key_columns,
    key_types,
    local_aggregate,
    operator_time_mode,
    output_schema,
    run_operator,
    tag_columns,
    tagged_union,
)
from tableapi.errors import ValidationError
from tableapi.expressions import Call, Column, Expression, Literal
from tableapi.plan import (
    Aggregate,
    Distinct,
    FileSource,
    Join,
    MultiJoin,
    PlanNode,
    Scan,
    SparkSource,
    TemporalJoin,
    Union,
)
from tableapi.plan.changelog import (
    ChangelogMode,
    JoinStrategy,
    StateBackend,
    StreamingOptions,
    aggregate_ttl_ms,
    all_bounded,
    changelog_mode,
    is_bounded,
    is_changelog,
    join_strategy,
    monitor_interval_ms,
    operator_nodes,
    two_phase,
    update_before_needed,
)
from tableapi.plan.sources import FILE_ORDERS
from tableapi.types import Field, RowType
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


def compile_stream(
    node: PlanNode,
    spark: SparkSession,
    options: StreamingOptions | None = None,
    end_of_input: EndOfInput | None = None,
    sink_keys: tuple[str, ...] | None = None,
    local_files: bool = False,
) -> CompiledStream:
    """Compile an optimized, streaming-checked plan. With ``end_of_input`` the bounded
    tables' watermarks move to +infinity when it is signalled (see ``end_of_input.py``);
    without it they stay where their data leaves them. ``sink_keys``: the plan's rows go
    into a sink keyed by these columns (an upsert sink), which needs no -U rows where the
    plan's upsert key is within them; None: the consumer needs them (a result).
    ``local_files``: the server reads this machine's files, so a missing path is refused
    before anything runs."""
    options = options or StreamingOptions()
    check_plugin(node, options)
    compiler = StreamingCompiler(spark, options, end_of_input, local_files)
    compiler.update_before = update_before_needed(node, sink_keys)
    df = compiler.compile(node)
    mode = changelog_mode(node)
    changelog = None
    if mode is ChangelogMode.ALL:  # the result keeps the row kind; __seq orders its changes
        columns = [*(ref(n) for n in node.row_type.names), ref(KIND)]
        df, changelog = df.select(*columns), df.select(*columns, ref(SEQ))
    return CompiledStream(
        df,
        mode,
        options.state_backend,
        compiler.processing_time,
        all_bounded(node),
        trigger_ms(node, compiler.options),
        end_of_input,
        tuple(compiler.lookups),
        changelog,
    )


def check_plugin(node: PlanNode, options: StreamingOptions) -> None:
    """Refuse a plan with stateful operators for a server without the JVM plugin (their only
    runtime), saying how to get it.

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> scan = Scan("A", ElementsSource(()), RowType.of(("a", BIGINT)))
    >>> check_plugin(Distinct(scan), StreamingOptions(jvm_plugin=False))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: This query's Distinct cannot run: Stateful streaming ...
    >>> check_plugin(scan, StreamingOptions(jvm_plugin=False))  # stateless: no plugin needed
    """
    if options.jvm_plugin is not False:
        return
    operators = sorted({type(n).__name__ for n in operator_nodes(node, options)})
    if operators:
        raise ValidationError(f"This query's {', '.join(operators)} cannot run: {NO_PLUGIN}")


def trigger_ms(node: PlanNode, options: StreamingOptions) -> int | None:
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
    interval = monitor_interval_ms(node)
    if interval is None or options.mini_batch_ms is None:
        return interval
    return max(interval, options.mini_batch_ms)


class StreamingCompiler(Compiler):
    """Streaming mode: every node's DataFrame has the node's columns, plus ``__kind`` and
    ``__seq`` when the node emits a changelog."""

    mode = "streaming"

    def __init__(
        self,
        spark: SparkSession,
        options: StreamingOptions,
        end_of_input: EndOfInput | None,
        local_files: bool = False,
    ) -> None:
        super().__init__(spark, local_files)
        self.options = options
        self.end_of_input = end_of_input
        self.processing_time = False  # what running the query needs, found while compiling
        # Per node (by id): do its consumers need its -U rows (``update_before_needed``)?
        self.update_before: dict[int, bool] = {}

    def carried_fields(self, node: PlanNode) -> list[tuple[str, str]]:
        return [(KIND, "TINYINT"), (SEQ, "STRING")] if is_changelog(node) else []

    def observation(self, name: str) -> Any:
        return name

    def visit_Scan(self, node: Scan) -> DataFrame:
        source = node.source
        if isinstance(source, SparkSource):
            return source.dataframe
        if not isinstance(source, FileSource):
            raise ValidationError(f"Table {node.table_name} cannot be read as a stream.")
        ddl = node.row_type.spark_ddl
        op = source.op_column
        if op:
            if op in node.row_type:
                raise ValidationError(
                    f"changelog.op-column {op!r} of table {node.table_name} is also a column of "
                    "its schema; the op column is not part of the table: remove it from the "
                    "schema."
                )
            # CSV is positional: the op column comes first (Flink's changelog-csv); JSON and
            # Parquet read it by name.
            ddl = f"`{op}` STRING, {ddl}" if source.format == "csv" else f"{ddl}, `{op}` STRING"
        reader = self.spark.readStream.format(source.format).schema(ddl)
        for k, v in source.options:
            reader = reader.option(k, v)
        df: DataFrame = reader.load(source.path)
        if op:
            df = self._in_file_order(df, node, source, op)
        return self._with_watermark(df, node)

    def _in_file_order(self, df: DataFrame, node: Scan, source: FileSource, op: str) -> DataFrame:
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
        files = {f: F.col(f"_metadata.{f}").alias(f"__{f}") for f in _FILE_FIELDS}
        df = df.select(*(ref(n) for n in names), ref(op), *files.values())
        df = self._positions(df, _POSITION, ref("__file_block_start"))
        if source.file_order == FILE_ORDERS[0]:
            df = self._file_times(df, node.table_name)
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

    def _file_times(self, df: DataFrame, table: str) -> DataFrame:
        """``df`` plus ``__file_time``: its rows' files' modification times in nanoseconds
        (the plugin's ``file_time`` relation; without the plugin its pandas UDF twin)."""
        if self.options.jvm_plugin is not False:
            return jvm_file_time(df, "__file_path", _FILE_TIME, table)
        times = UserDefinedFunction(
            file_times, LongType(), evalType=PythonEvalType.SQL_SCALAR_PANDAS_UDF
        )
        micros = F.unix_micros(ref("__file_modification_time"))
        return df.select("*", times(ref("__file_path"), micros, F.lit(table)).alias(_FILE_TIME))

    def _positions(self, df: DataFrame, name: str, any_column: SparkColumn) -> DataFrame:
        """``df`` plus ``name``: its rows numbered in the order each task reads or makes them
        (the plugin's ``position`` relation; without the plugin its pandas UDF twin, given
        ``any_column`` to count rows by)."""
        return with_positions(df, name, any_column, plugin=self.options.jvm_plugin is not False)

    def operator_input(self, child: PlanNode) -> DataFrame:
        """``child`` compiled as an operator's input. An operator's output changes carry an
        empty ``__seq``: where they reach another operator through narrow steps only, each
        gets its place in its task's output order instead (the key's changes stay in order
        through the shuffle and the sort, which keeps equal keys in order only while it does
        not spill); a scan's ``__seq`` stays."""
        df = self.compile(child)
        if not is_changelog(child) or not operator_nodes(child, self.options):
            return df
        df = self._positions(df, _OPERATOR_POSITION, ref(KIND))
        place = F.lpad(ref(_OPERATOR_POSITION).cast("string"), 20, "0")
        seq = F.when(ref(SEQ) == F.lit(""), place).otherwise(ref(SEQ)).alias(SEQ)
        names = [*child.row_type.names, KIND]
        return df.select(*(ref(n) for n in names), seq)

    def _with_watermark(self, df: DataFrame, node: Scan) -> DataFrame:
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
        end = self.end_of_input if is_bounded(node) else None
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

    def visit_Union(self, node: Union) -> DataFrame:
        if node.distinct:
            raise ValidationError(
                "union (distinct) is not supported in streaming mode; use union_all."
            )
        sides = []
        for side in (node.left, node.right):
            df = self.compile(side)
            if is_changelog(node) and not is_changelog(side):
                # An insert-only stream as a changelog: every row +I, in no particular order.
                kind = F.lit(wire.INSERT).cast("tinyint").alias(KIND)
                df = df.select("*", kind, F.lit("").alias(SEQ))
            sides.append(df)
        return sides[0].unionAll(sides[1])

    # -- joins ------------------------------------------------------------------------------
    def visit_Join(self, node: Join) -> DataFrame:
        strategy = join_strategy(node, self.options)
        if strategy in (JoinStrategy.NATIVE, JoinStrategy.INTERVAL):
            # Where Spark's own join gives Flink's answer (``join_strategy``). Inner interval
            # joins: the time bounds are in the condition and both inputs carry their
            # schemas' watermarks, so Spark keeps state only within the bounds.
            return self.spark_join(node)
        keys = node.equi_keys or ()
        lrow, rrow = node.left.row_type, node.right.row_type
        types = key_types([[lrow.field(k.left).type, rrow.field(k.right).type] for k in keys])
        rows = [lrow, rrow]
        bounds = node.interval if strategy is JoinStrategy.INTERVAL_OPERATOR else None
        ltime, rtime = (bounds.left_time, bounds.right_time) if bounds else (None, None)

        def tagged(side: int, child: PlanNode, names: list[str], time: str | None) -> DataFrame:
            tags = tag_columns(side, child, rows)
            # Interval joins: the rowtime as epoch millis only; a timestamp copy would carry
            # its watermark marker and Spark would drop rows behind the watermark before the
            # operator (see visit_TemporalJoin). A NULL key stays: groupBy keeps its group.
            stamp = [F.unix_millis(ref(time)).alias(tw.TIME)] if time else []
            return self.operator_input(child).select(*key_columns(names, types), *tags, *stamp)

        union = tagged_union(
            [
                tagged(wire.LEFT, node.left, [k.left for k in keys], ltime),
                tagged(wire.RIGHT, node.right, [k.right for k in keys], rtime),
            ],
            types,
            [node.left, node.right],
            time=bounds is not None,
        )
        if bounds is not None:
            return self._operator(node, union, interval_join_spec(node))
        return self._operator(node, union, join_spec(node, self.options.default_ttl_ms))

    # -- aggregation ------------------------------------------------------------------------
    def visit_Aggregate(self, node: Aggregate) -> DataFrame:
        return self._aggregate(node, node.group_keys, node.aggs)

    def visit_Distinct(self, node: Distinct) -> DataFrame:
        return self._aggregate(node, node.row_type.names, ())

    def _aggregate(
        self,
        node: Aggregate | Distinct,
        group_keys: tuple[str, ...],
        aggs: tuple[tuple[str, Expression], ...],
    ) -> DataFrame:
        """The group aggregate operator over the input, grouped by the group
        key (a global aggregate: one constant key); its input row holds the keys and each
        aggregate argument, computed before the shuffle."""
        (child,) = node.inputs
        two = two_phase(node, self.options)
        spec, columns = aggregate_spec(
            node,
            group_keys,
            aggs,
            self.update_before.get(id(node), True),
            aggregate_ttl_ms(node, self.options.default_ttl_ms),
            mini_batch=self.options.mini_batch_ms is not None,
            bundle_size=self.options.mini_batch_size,
            two_phase=two,
        )
        row = child.row_type
        types = [t for _, _, t in columns[: len(group_keys)]]
        # The keys travel in __k0..: the operator reads only the calls' arguments from the row
        # (aggregate_spec gives each its own column), so the key fields are NULL here, not a
        # second copy of each key for every row to build, shuffle and fold.
        keys = len(group_keys)
        own = F.struct(
            *(
                (F.lit(None) if i < keys else to_spark(e, row)).cast(t.spark_ddl).alias(n)
                for i, (n, e, t) in enumerate(columns)
            )
        )
        changelog = is_changelog(child)
        # Two phases: partials merge in any order, so the input needs no order of its own.
        source = self.compile(child) if two else self.operator_input(child)
        tagged = source.select(
            *key_columns(list(group_keys), types),
            F.lit(0).cast("tinyint").alias(wire.SIDE),
            (ref(KIND) if changelog else F.lit(wire.INSERT).cast("tinyint")).alias(KIND),
            (ref(SEQ) if changelog else F.lit("")).alias(SEQ),
            own.alias(mw.input_column(0)),
        )
        in_row = RowType(tuple(Field(n, t) for n, _, t in columns))
        union = tagged_union([tagged], types, [child], rows=[in_row])
        if two:
            union = local_aggregate(union, spec, output_schema(node.row_type))
        return self._operator(node, union, spec)

    def visit_MultiJoin(self, node: MultiJoin) -> DataFrame:
        """The multi-way join operator over every input, each tagged with its index and
        carried in its own struct column, grouped by the common key."""
        spec = mw.MultiJoinSpec(
            inputs=tuple(fields_of(r.row_type) for r in node.relations),
            kinds=tuple(WIRE_KINDS[j.kind] for j in node.joins),
            conditions=tuple(
                condition_tree(j.condition, j.left.row_type, j.right.row_type)
                for j in node.joins
                if j.condition is not None
            ),
            ttl_ms=self.options.default_ttl_ms,
        )
        inputs = list(zip(node.relations, node.common_key, strict=True))
        types = key_types(
            [
                [r.row_type.field(cols[p]).type for r, cols in inputs]
                for p in range(len(node.common_key[0]))
            ]
        )
        rows = [r.row_type for r in node.relations]
        tagged = [
            self.operator_input(child).select(
                *key_columns(list(node.common_key[i]), types), *tag_columns(i, child, rows)
            )
            for i, child in enumerate(node.relations)
        ]
        return self._operator(node, tagged_union(tagged, types, list(node.relations)), spec)

    def visit_TemporalJoin(self, node: TemporalJoin) -> DataFrame:
        """The temporal join operator over both inputs tagged by side; probe rows that arrive
        behind the watermark are counted (observed metric ``late_rows``) and dropped."""
        if node.equi_keys is None:
            raise ValidationError("compile the optimized plan: join conditions are not split")
        keys = node.equi_keys
        lrow, rrow = node.left.row_type, node.right.row_type
        spec = tw.TemporalSpec(
            kind=WIRE_KINDS[node.kind],
            time=node.time,
            left=wire.SideSpec(fields_of(lrow)),
            right=wire.SideSpec(
                fields_of(rrow),
                wire.InputSpec.JOIN_KEY_CONTAINS_UNIQUE_KEY,  # TemporalJoin checked the PK
                tuple(rrow.index(k) for k in node.right_key),
            ),
            residual=None if node.residual is None else condition_tree(node.residual, lrow, rrow),
            output_names=node.row_type.names,
        )
        types = key_types([[lrow.field(k.left).type, rrow.field(k.right).type] for k in keys])
        rows = [lrow, rrow]

        def tagged(side: int, child: PlanNode, names: list[str], time: str | None) -> DataFrame:
            df = self.operator_input(child)
            if is_changelog(child) and side == wire.RIGHT:
                # A versioned table is an upsert stream: +U opens the new version; -U (stamped
                # with the old version's time) would wrongly close the old one.
                df = df.filter(ref(KIND) != F.lit(wire.UPDATE_BEFORE))
            stamp = ref(time) if time else F.lit(None).cast("timestamp")
            return df.select(
                *key_columns(names, types),
                *tag_columns(side, child, rows),
                # Epoch millis only: a timestamp copy of the rowtime would carry its watermark
                # marker, and Spark would then drop rows behind the watermark before the
                # processor could count them as late (or keep a late version).
                F.unix_millis(stamp).alias(tw.TIME),
            )

        right_time = node.right_time if node.time == "event" else None
        union = tagged_union(
            [
                tagged(wire.LEFT, node.left, [k.left for k in keys], node.as_of),
                tagged(wire.RIGHT, node.right, [k.right for k in keys], right_time),
            ],
            types,
            [node.left, node.right],
            time=True,
        )
        out = self._operator(node, union, spec, keep_late=True)
        late = F.col(KIND) == F.lit(tw.LATE)
        out = out.observe(
            tw.LATE_ROWS_METRIC, F.sum(F.when(late, 1).otherwise(0)).alias("late_rows")
        )
        return out.filter(~late).select(
            *(ref(n) for n in node.row_type.names), *self.carried_columns(node)
        )

    def _operator(
        self, node: PlanNode, union: TaggedUnion, spec: OperatorSpec, keep_late: bool = False
    ) -> DataFrame:
        """Run ``spec``'s server_ext operator over ``union``; the rows come out with the
        node's columns and, for a changelog, its row kind (changes of one output row come
        from one key, in order: across keys the order is free, so ``__seq`` is empty)."""
        self.processing_time |= operator_time_mode(spec) == "ProcessingTime"
        out = run_operator(union, spec, output_schema(node.row_type))
        if keep_late:  # the temporal join counts and drops its late rows itself
            return out
        names = [ref(n) for n in node.row_type.names]
        if not is_changelog(node):
            return out.select(*names)
        return out.select(*names, ref(KIND), F.lit("").alias(SEQ))


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
