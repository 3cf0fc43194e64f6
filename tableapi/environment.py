"""``TableEnvironment``: the catalog, the configuration and the connection to Spark.

Example::

    env = TableEnvironment.create()                      # embedded local server
    env = TableEnvironment.create(remote="sc://localhost:15002")
    t = env.from_elements([(1, "Euro", 114)], ["id", "currency", "rate"])
    t.where(col("rate") > 100).execute().print()
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import itertools
import re
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pyspark.sql.connect import functions as F

from tableapi import session
from tableapi.compiler import compile_plan
from tableapi.compiler.end_of_input import EndOfInput
from tableapi.compiler.streaming import CompiledStream, compile_stream
from tableapi.descriptor import TableDescriptor
from tableapi.durations import parse_duration_ms
from tableapi.errors import ValidationError
from tableapi.expressions import Expression, UnresolvedCall, UserFunction
from tableapi.plan.explain import render
from tableapi.plan.nodes import ElementsSource, FileSource, PlanNode, Scan, SparkSource
from tableapi.plan.streaming import (
    ChangelogMode,
    StreamingOptions,
    changelog_mode,
    check_streaming,
    needs_end_of_input,
)
from tableapi.result import StreamingTableResult, TableResult
from tableapi.schema import Schema
from tableapi.table import Table, TemporalTableFunction
from tableapi.types import DataType, Field, RowType, from_spark, type_of_value

if TYPE_CHECKING:
    from pyspark.sql.connect.dataframe import DataFrame
    from pyspark.sql.connect.session import SparkSession
    from pyspark.sql.connect.streaming.query import StreamingQuery
    from pyspark.sql.connect.streaming.readwriter import DataStreamWriter

MODES = ("batch", "streaming")
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
_embedded: session.EmbeddedServer | None = None
_embedded_lock = threading.Lock()
_anonymous = itertools.count()


class TableConfig:
    """Flink-style string options: ``env.config.set("table.exec.state.ttl", "1 h")``."""

    def __init__(self) -> None:
        self._values: dict[str, str] = {}

    def set(self, key: str, value: object) -> TableConfig:
        self._values[key] = str(value)
        return self

    def get(self, key: str, default: str | None = None) -> str | None:
        return self._values.get(key, default)

    def to_dict(self) -> dict[str, str]:
        return dict(self._values)


class TableEnvironment:
    """Entry point: defines tables and functions, and runs queries on Spark."""

    def __init__(self, mode: str, remote: str | None, master: str) -> None:
        if mode not in MODES:
            raise ValidationError(f"Unknown mode {mode!r}; use one of {list(MODES)}.")
        self.mode = mode
        self.config = TableConfig()
        self._remote = remote
        self._master = master
        self._spark: SparkSession | None = None
        self._tables: dict[str, TableDescriptor | Table] = {}
        self._functions: dict[str, UserFunction] = {}
        self._temporal_functions: dict[str, TemporalTableFunction] = {}

    @classmethod
    def create(
        cls, mode: str = "batch", remote: str | None = None, master: str = "local[2]"
    ) -> TableEnvironment:
        """A new environment. Without ``remote`` the first query starts an embedded server
        (``python -m server_ext serve`` on a free port) shared by this process."""
        return cls(mode, remote, master)

    @property
    def remote(self) -> str | None:
        """The Spark Connect URL given to ``create()``; None: the embedded server."""
        return self._remote

    @property
    def default_state_ttl_ms(self) -> int | None:
        """``table.exec.state.ttl`` in milliseconds; None (or 0) keeps join state forever."""
        value = self.config.get("table.exec.state.ttl")
        return (parse_duration_ms(value, "table.exec.state.ttl") or None) if value else None

    @property
    def multi_join_max_tables(self) -> int | None:
        """Streaming with ``table.optimizer.multi-join.enabled``: the most inputs one
        multi-way join takes (``table.optimizer.multi-join.max-tables``, no limit by
        default); None otherwise."""
        enabled = _flag(self.config, "table.optimizer.multi-join.enabled", "false")
        if self.mode != "streaming" or not enabled:
            return None
        value = self.config.get("table.optimizer.multi-join.max-tables")
        if value is None:
            return 1 << 30
        if not value.strip().isdigit() or int(value) < 3:
            raise ValidationError(
                f"table.optimizer.multi-join.max-tables must be a whole number of at least 3 "
                f"(a multi-way join joins 3 or more tables), got {value!r}."
            )
        return int(value)

    @property
    def streaming_options(self) -> StreamingOptions:
        native = _flag(self.config, "table.exec.join.spark-native.enabled", "true")
        return StreamingOptions(self.default_state_ttl_ms, native)

    # -- connection ----------------------------------------------------------------------------
    @property
    def spark(self) -> SparkSession:
        """The Spark Connect session (connects, or starts the embedded server, on first use)."""
        if self._spark is None:
            url = self._remote or _embedded_server(self._master).url
            self._spark = session.connect(url)
        return self._spark

    def close(self) -> None:
        if self._spark is not None:
            self._spark.stop()
            self._spark = None

    # -- catalog ---------------------------------------------------------------------------------
    def create_temporary_table(self, path: str, descriptor: TableDescriptor) -> None:
        """Register a table backed by files: ``env.create_temporary_table("Orders", d)``."""
        if not isinstance(descriptor, TableDescriptor):
            raise ValidationError("create_temporary_table() needs a TableDescriptor (.build()).")
        self._register(path, descriptor)

    def create_temporary_view(self, path: str, table: Table) -> None:
        self._register(path, table)

    def _register(self, path: str, obj: TableDescriptor | Table) -> None:
        if path in self._tables:
            raise ValidationError(
                f"Table {path!r} exists already; drop it first with drop_temporary_table({path!r})."
            )
        self._tables[path] = obj

    def drop_temporary_table(self, path: str) -> bool:
        return self._tables.pop(path, None) is not None

    drop_temporary_view = drop_temporary_table

    def list_tables(self) -> list[str]:
        return sorted(self._tables)

    def from_path(self, path: str) -> Table:
        entry = self._tables.get(path)
        if entry is None:
            raise ValidationError(
                f"Table {path!r} not found. Registered tables: {self.list_tables()}. "
                "Register it with create_temporary_table()."
            )
        if isinstance(entry, Table):
            return entry
        source = FileSource(
            entry.path,
            entry.format,
            entry.reader_options,
            entry.options.get("changelog.op-column"),
            entry.monitor_interval_ms,
        )
        return Table(Scan(path, source, entry.table_schema), self)

    def descriptor(self, path: str) -> TableDescriptor:
        entry = self._tables.get(path)
        if not isinstance(entry, TableDescriptor):
            raise ValidationError(
                f"{path!r} is not a table with a connector. Tables: {self.list_tables()}."
            )
        return entry

    def from_elements(
        self,
        elements: Iterable[Sequence[Any]],
        schema: Sequence[str] | str | RowType | Schema | None = None,
    ) -> Table:
        """A table from Python rows. ``schema`` is column names (types inferred), a DDL string
        such as ``"id BIGINT, name STRING"``, or a Schema."""
        rows = tuple(tuple(r) for r in elements)
        row_type = _elements_row_type(rows, schema)
        for i, r in enumerate(rows):
            if len(r) != len(row_type):
                raise ValidationError(
                    f"Row {i} has {len(r)} values but the schema has {len(row_type)} columns "
                    f"[{', '.join(row_type.names)}]."
                )
        declared: RowType | Schema = schema if isinstance(schema, Schema) else row_type
        name = f"Values${next(_anonymous)}"
        return Table(Scan(name, ElementsSource(rows), declared), self)

    def from_spark(self, dataframe: DataFrame, name: str | None = None) -> Table:
        """Wrap a Spark Connect DataFrame as a table."""
        row = RowType(
            tuple(
                Field(f.name, from_spark(f.dataType).with_nullable(f.nullable))
                for f in dataframe.schema.fields
            )
        )
        return Table(Scan(name or f"Spark${next(_anonymous)}", SparkSource(dataframe), row), self)

    def create_temporary_function(
        self, name: str, function: UserFunction | TemporalTableFunction
    ) -> None:
        """Register a function for ``call(name, ...)``: ``udf(f, result_type="INT")``, or a
        temporal table function for ``join_lateral``."""
        if isinstance(function, TemporalTableFunction):
            self._temporal_functions[name.lower()] = function
            return
        if not isinstance(function, UserFunction):
            raise ValidationError(
                "create_temporary_function() takes udf(python_function, result_type=...) or "
                "table.create_temporal_table_function(time_attribute, primary_key)."
            )
        self._functions[name.lower()] = function

    create_temporary_system_function = create_temporary_function

    def _resolve(self, expr: Expression) -> Expression:
        """Replace calls of registered functions by their definitions."""

        def fix(e: Expression) -> Expression | None:
            if isinstance(e, UnresolvedCall):
                fn = self._functions.get(e.name.lower())
                if fn is None:
                    raise ValidationError(
                        f"Unknown function {e.name!r}. Registered functions: "
                        f"{sorted(self._functions)}; register it with "
                        f"create_temporary_function({e.name!r}, udf(...))."
                    )
                return fn(*e.args)
            return None

        return expr.transform(fix)

    # -- running ---------------------------------------------------------------------------------
    def _compile(self, plan: PlanNode) -> DataFrame:
        return compile_plan(plan, self.spark)

    def _compile_table(self, table: Table) -> DataFrame:
        plan = table.optimized().plan
        if self.mode == "batch":
            return self._compile(plan)
        check_streaming(plan)
        compiled = compile_stream(plan, self.spark, self.streaming_options)
        self._configure_for(compiled)
        return compiled.dataframe

    def _execute(self, plan: PlanNode) -> DataFrame:
        """The batch DataFrame of an optimized plan."""
        if self.mode == "streaming":
            raise ValidationError("internal: a streaming plan went to the batch compiler")
        return self._compile(plan)

    def _run(self, table: Table) -> TableResult:
        """``Table.execute()``: a finished batch result, or a running streaming query."""
        plan = table.optimized().plan
        if self.mode == "batch":
            return TableResult(self._execute(plan), table.row_type)
        check_streaming(plan)
        with self._end_of_input(plan) as end:
            compiled = compile_stream(plan, self.spark, self.streaming_options, end)
            return self._run_stream(compiled, table.row_type)

    def _run_stream(self, compiled: CompiledStream, row_type: RowType) -> StreamingTableResult:
        has_kind = compiled.mode is ChangelogMode.ALL
        name = f"tableapi_result_{uuid.uuid4().hex[:12]}"
        checkpoints = self.config.get("execution.checkpointing.dir")
        spark = self.spark
        if checkpoints:
            # Spark's memory sink cannot resume from a checkpoint: a checkpointed job writes
            # its changelog as Parquet beside the checkpoint, and a restarted job appends to it.
            base = f"{checkpoints.rstrip('/')}/{self.config.get('pipeline.name') or name}"
            changelog = f"{base}/changelog"
            writer = (
                compiled.dataframe.writeStream.format("parquet")
                .option("path", changelog)
                .option("checkpointLocation", f"{base}/checkpoint")
            )

            schema = compiled.dataframe.schema  # no data files yet: nothing to infer from

            def output() -> DataFrame:
                # Files are written batch after batch: their times give the changelog's order.
                df = spark.read.schema(schema).parquet(changelog)
                order = F.col("_metadata.file_modification_time")
                return df.orderBy(order, F.col("_metadata.file_name")).select(*df.columns)

        else:
            writer = compiled.dataframe.writeStream.format("memory").queryName(name)

            def output() -> DataFrame:
                return spark.table(name)

        query, cleanup = self._start(compiled, writer)
        return StreamingTableResult(query, output, row_type, has_kind, cleanup)

    @contextlib.contextmanager
    def _end_of_input(self, plan: PlanNode) -> Iterator[EndOfInput | None]:
        """The end-of-input table of a query reading bounded tables with watermarks (see
        ``compiler/end_of_input.py``), created before compiling (the compiler analyzes plans
        that read it); dropped if the query does not start."""
        end = EndOfInput.new() if needs_end_of_input(plan) else None
        if end:
            end.create(self.spark)
        try:
            yield end
        except BaseException:
            if end:
                end.drop(self.spark)
            raise

    def _start(
        self, compiled: CompiledStream, writer: DataStreamWriter
    ) -> tuple[StreamingQuery, Callable[[], None] | None]:
        """Start a streaming query. With only bounded inputs it runs to their end (event time
        then moves to +infinity) and stops; with some, their end is signalled once they are
        read. Returns the query and what to clean up when it is cancelled (if anything)."""
        spark = self.spark
        end = compiled.end_of_input
        if compiled.trigger_ms:
            writer = writer.trigger(processingTime=f"{compiled.trigger_ms} milliseconds")
        self._configure_for(compiled)
        query = None
        try:
            query = writer.outputMode("append").start()
            if compiled.bounded or end:
                # Spark reads every file present in the first micro-batch: once it is done,
                # the bounded inputs are read.
                query.processAllAvailable()
            if end:
                end.signal(spark)
                if compiled.bounded:
                    query.processAllAvailable()
                if compiled.bounded and compiled.processing_time:
                    # No-data micro-batches are off (ProcessingTime queries): a second signal
                    # runs the batch that sees the watermark at +infinity.
                    end.signal(spark)
                    query.processAllAvailable()
            if compiled.bounded:
                query.stop()
        except BaseException:
            if query is not None:
                query.stop()
            raise
        if end and compiled.bounded:
            end.drop(spark)
            return query, None
        return query, (lambda: end.drop(spark)) if end else None

    def _configure_for(self, compiled: CompiledStream) -> None:
        """Session settings the next streaming query needs (they apply at its start)."""
        # The state store is chosen per query: server_ext's processors need RocksDB; Spark's
        # native joins are faster on the default HDFS-backed store (DESIGN.md).
        provider = ROCKSDB_PROVIDER if compiled.uses_operator else HDFS_PROVIDER
        self.spark.conf.set("spark.sql.streaming.stateStore.providerClass", provider)
        if compiled.processing_time:
            # Otherwise processAllAvailable() never returns with timeMode ProcessingTime.
            self.spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")

    def _insert(self, table: Table, path: str, overwrite: bool) -> TableResult:
        sink = self.descriptor(path)
        physical = sink.table_schema.physical_row_type
        source = table.row_type
        if len(source) != len(physical):
            raise ValidationError(
                f"Cannot insert [{', '.join(source.names)}] into {path!r}: the sink's physical "
                f"columns are [{', '.join(physical.names)}] (computed columns are not "
                "written). Select exactly those, in that order."
            )
        from tableapi.expressions import Column

        projected = table.select(
            *(
                Column(s.name).cast(p.type.plain()).alias(p.name)
                for s, p in zip(source, physical, strict=True)
            )
        )
        plan = projected.optimized().plan
        if self.mode == "batch":
            df = self._execute(plan)
            mode = "overwrite" if overwrite else "append"
            df.write.format(sink.format).mode(mode).save(sink.path)
            return TableResult(None, physical)
        check_streaming(plan)
        if changelog_mode(plan) is not ChangelogMode.INSERT_ONLY:
            raise ValidationError(
                f"Table sink '{path}' doesn't support consuming update and delete changes "
                f"which are produced by {_first_updating_node(plan)}. The filesystem sink is "
                "append-only: insert an insert-only query (e.g. an inner join of insert-only "
                "tables), or use execute() to see the changelog."
            )
        if overwrite:
            raise ValidationError("overwrite=True is for batch mode; a streaming insert appends.")
        with self._end_of_input(plan) as end:
            compiled = compile_stream(plan, self.spark, self.streaming_options, end)
            return self._insert_stream(compiled, sink, path, physical)

    def _insert_stream(
        self, compiled: CompiledStream, sink: TableDescriptor, path: str, physical: RowType
    ) -> StreamingTableResult:
        writer = compiled.dataframe.writeStream.format(sink.format).option("path", sink.path)
        checkpoints = self.config.get("execution.checkpointing.dir")
        job = self.config.get("pipeline.name") or f"insert-into-{path}"
        # A file sink needs a checkpoint; by default it sits beside the data ('_' names are
        # not read as data).
        location = (
            f"{checkpoints.rstrip('/')}/{job}"
            if checkpoints
            else f"{sink.path.rstrip('/')}/_checkpoint"
        )
        query, cleanup = self._start(compiled, writer.option("checkpointLocation", location))
        return StreamingTableResult(query, None, physical, False, cleanup)


def _flag(config: TableConfig, key: str, default: str) -> bool:
    """A true/false option; anything else is an error naming the option."""
    value = (config.get(key) or default).strip().lower()
    if value not in ("true", "false"):
        raise ValidationError(f"{key} must be true or false, got {config.get(key)!r}.")
    return value == "true"


def _first_updating_node(plan: PlanNode) -> str:
    """The lowest node that turns insert-only inputs into updates (for error messages)."""
    for node in reversed(list(plan.walk())):
        inputs_insert_only = all(
            changelog_mode(i) is ChangelogMode.INSERT_ONLY for i in node.inputs
        )
        if changelog_mode(node) is ChangelogMode.ALL and inputs_insert_only:
            return render(node, optimized=True).splitlines()[0]
    return "its input"


def _embedded_server(master: str) -> session.EmbeddedServer:
    global _embedded
    with _embedded_lock:
        if _embedded is None or _embedded.process.poll() is not None:
            _embedded = session.EmbeddedServer.start(master=master)
        return _embedded


_PY_TYPES: list[tuple[type, DataType]] = [
    (bool, DataType("BOOLEAN")),
    (int, DataType("BIGINT")),
    (float, DataType("DOUBLE")),
    (decimal.Decimal, DataType("DECIMAL", (38, 18))),
    (str, DataType("STRING")),
    (dt.datetime, DataType("TIMESTAMP", (3,))),
    (dt.date, DataType("DATE")),
]


def _elements_row_type(
    rows: tuple[tuple[Any, ...], ...], schema: Sequence[str] | str | RowType | Schema | None
) -> RowType:
    if isinstance(schema, Schema):
        if schema.computed_columns:
            raise ValidationError("from_elements() takes physical columns only.")
        return schema.physical_row_type
    if isinstance(schema, RowType):
        return schema
    if isinstance(schema, str):
        fields = []
        for part in re.split(r",(?![^(]*\))", schema):  # not the comma of DECIMAL(10, 2)
            bits = part.strip().split(None, 1)
            if len(bits) != 2:
                raise ValidationError(
                    f"Cannot read {part.strip()!r} in schema {schema!r}: write 'name TYPE'."
                )
            fields.append(Field(bits[0].strip("`"), DataType.parse(bits[1])))
        return RowType(tuple(fields))
    width = len(rows[0]) if rows else 0
    names = list(schema) if schema is not None else [f"f{i}" for i in range(width)]
    fields = []
    for i, name in enumerate(names):
        values = [r[i] for r in rows if i < len(r) and r[i] is not None]
        if not values:
            raise ValidationError(
                f"Cannot infer the type of column {name!r}: it has no non-NULL value. Give a "
                "schema such as 'id BIGINT, name STRING'."
            )
        fields.append(Field(name, _python_type(values[0], name)))
    return RowType(tuple(fields))


def _python_type(value: Any, name: str) -> DataType:
    for cls, t in _PY_TYPES:
        if isinstance(value, cls):
            return t
    type_of_value(value)  # raises a clear error for unsupported values
    raise ValidationError(f"Cannot infer a type for column {name!r} from {value!r}.")
